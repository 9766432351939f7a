import { InvalidJobInputError } from 'nest-pg-job-queue';

/** What `call` rejects with, checked to be the typed error naming the field: fails if it succeeds. */
export async function refusal(call: Promise<unknown>): Promise<InvalidJobInputError> {
  const error = await call.then(
    () => new Error('the call succeeded; it should have been refused'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InvalidJobInputError);
  return error as InvalidJobInputError;
}
