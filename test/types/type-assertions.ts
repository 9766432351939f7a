/** True when `A` and `B` are the same type (not merely assignable either way). */
export type Equal<A, B> =
  (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

/** Compiles only when `T` is `true`: `assertTrue<Equal<A, B>>()`. */
export function assertTrue<T extends true>(): T | void {}

/** `typeOf(value).is<T>()` compiles only when `value`'s type is exactly `T`. */
export function typeOf<V>(value: V): {
  is<T>(...proof: Equal<V, T> extends true ? [] : [mismatch: never]): V;
} {
  return { is: () => value };
}
