import { types } from 'pg';

const TIMESTAMPTZ_OID = 1184;
/** An ISO-DateStyle offset of whole hours ("+00", "-05"), which `Date.parse` wants as "+00:00". */
const HOURS_ONLY_OFFSET = /[+-]\d\d$/;

/**
 * Turns timestamptz values read as text (`column::text`) into Dates, parsing each distinct text
 * once. A claim's rows share most of their timestamps (the claim's own now() in four columns;
 * one created_at for a bulk-enqueued backlog), and pg's regex parser on every value is a cost a
 * worker pays per row it claims (see bench/README.md, "Shaped by measurement"). Every Date is a
 * new object: handlers may mutate.
 */
export class TimestampTextParser {
  private readonly parsed = new Map<string, number>();

  toDate(text: string | null): Date | null {
    if (text === null) return null;
    let ms = this.parsed.get(text);
    if (ms === undefined) {
      ms = parseTimestamptzText(text);
      this.parsed.set(text, ms);
    }
    return new Date(ms);
  }
}

/**
 * Milliseconds since the epoch, truncated like pg's own parser. PostgreSQL's default ISO DateStyle
 * ("2026-11-29 18:02:23.081234+00") is read by `Date.parse`; anything else (other offsets with
 * seconds, BC, infinity, five-digit years) goes to pg's own timestamptz parser.
 */
export function parseTimestamptzText(text: string): number {
  const iso = text.replace(' ', 'T') + (HOURS_ONLY_OFFSET.test(text) ? ':00' : '');
  const ms = Date.parse(iso);
  if (!Number.isNaN(ms)) return ms;
  const parsed = types.getTypeParser(TIMESTAMPTZ_OID)(text) as Date | number;
  return parsed instanceof Date ? parsed.getTime() : parsed;
}

/**
 * `date` as timestamptz input PostgreSQL reads, for every Date in its range. `toISOString` is
 * that for years 1 to 9999; PostgreSQL refuses its other forms ('+010000-…', '0000-…',
 * '-000001-…'), so those go as 'YYYYY-…' or, for ISO year y ≤ 0, as year 1 − y 'BC'.
 */
export function timestamptzInput(date: Date): string {
  const iso = date.toISOString();
  if (iso[0] !== '+' && iso[0] !== '-' && !iso.startsWith('0000')) return iso;
  const year = date.getUTCFullYear();
  const rest = iso.slice(iso.indexOf('-', 1)); // "-MM-DDTHH:mm:ss.sssZ"
  return year > 0 ? `${year}${rest}` : `${String(1 - year).padStart(4, '0')}${rest} BC`;
}
