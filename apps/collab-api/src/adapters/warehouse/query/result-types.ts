/**
 * A DuckDB result column's type as BigQuery names it (pure): result pages describe their columns
 * with the type names the table API takes (INT64, FLOAT64, BOOL, ...), whichever warehouse ran the
 * query, and nested values as GoogleSQL writes them (`ARRAY<INT64>`, ``STRUCT<`a` STRING>``), as
 * the BigQuery engine's columns already are.
 */
import { quotedField } from './bigquery-rules.js';

const SCALARS: Record<string, string> = {
  TINYINT: 'INT64',
  SMALLINT: 'INT64',
  INTEGER: 'INT64',
  BIGINT: 'INT64',
  // DuckDB's sum of BIGINT; BigQuery's SUM of INT64 is INT64.
  HUGEINT: 'INT64',
  UTINYINT: 'INT64',
  USMALLINT: 'INT64',
  UINTEGER: 'INT64',
  UBIGINT: 'INT64',
  UHUGEINT: 'INT64',
  BIGNUM: 'BIGNUMERIC',
  VARINT: 'BIGNUMERIC',
  FLOAT: 'FLOAT64',
  DOUBLE: 'FLOAT64',
  BOOLEAN: 'BOOL',
  VARCHAR: 'STRING',
  UUID: 'STRING',
  ENUM: 'STRING',
  BIT: 'STRING',
  BLOB: 'BYTES',
  DATE: 'DATE',
  TIME: 'TIME',
  TIME_NS: 'TIME',
  'TIME WITH TIME ZONE': 'TIME',
  TIMESTAMP: 'DATETIME',
  TIMESTAMP_S: 'DATETIME',
  TIMESTAMP_MS: 'DATETIME',
  TIMESTAMP_NS: 'DATETIME',
  'TIMESTAMP WITH TIME ZONE': 'TIMESTAMP',
  INTERVAL: 'INTERVAL',
  JSON: 'JSON',
};

/**
 * BigQuery's name for a DuckDB type as DuckDB prints it (`DECIMAL(10,2)`, `INTEGER[]`,
 * `STRUCT("a" VARCHAR)`). Values BigQuery has no type for (MAP, UNION) are JSON, as a load's
 * autodetect takes them.
 */
export function googleSqlTypeOfDuckDb(duckDbType: string): string {
  const reader = new TypeReader(duckDbType);
  const type = reader.type();
  return reader.atEnd() && !reader.broken ? type : 'JSON';
}

/** Reads DuckDB's print of a type, left to right. */
class TypeReader {
  private at = 0;
  /** Set when a bracket DuckDB always writes is missing: the text is no type DuckDB printed. */
  broken = false;

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    this.skipSpaces();
    return this.at >= this.text.length;
  }

  type(): string {
    let type = this.base();
    // `T[]` is a list, `T[3]` a fixed-size array: both ARRAY in BigQuery.
    while (this.peek() === '[') {
      this.at = this.text.indexOf(']', this.at) + 1 || this.text.length;
      type = `ARRAY<${type}>`;
    }
    return type;
  }

  private base(): string {
    const word = this.word();
    if (word === 'STRUCT') return `STRUCT<${this.fields().join(', ')}>`;
    if (word === 'TIMESTAMP' || word === 'TIME') {
      const rest = /^\s+WITH TIME ZONE/.exec(this.text.slice(this.at));
      if (rest) {
        this.at += rest[0].length;
        return SCALARS[`${word} WITH TIME ZONE`]!;
      }
    }
    const parameters = this.peek() === '(' ? this.parenthesized() : '';
    if (word === 'DECIMAL') return decimalType(parameters);
    return SCALARS[word] ?? 'JSON';
  }

  /** `("a" T, b T)`: each field's name and type. */
  private fields(): string[] {
    const fields: string[] = [];
    this.expect('(');
    while (this.peek() !== ')' && !this.atEnd()) {
      const name = this.name();
      fields.push(`${quotedField(name)} ${this.type()}`);
      if (this.peek() === ',') this.at += 1;
    }
    this.expect(')');
    return fields;
  }

  private name(): string {
    this.skipSpaces();
    if (this.text[this.at] !== '"') return this.bareWord();
    let name = '';
    for (this.at += 1; this.at < this.text.length; this.at += 1) {
      if (this.text[this.at] === '"') {
        if (this.text[this.at + 1] !== '"') break;
        this.at += 1;
      }
      name += this.text[this.at];
    }
    this.at += 1;
    return name;
  }

  /** A parenthesized part taken whole (a MAP's or UNION's types, an ENUM's values, DECIMAL's precision), quotes respected. */
  private parenthesized(): string {
    const start = this.at;
    let depth = 0;
    let quote: string | undefined;
    for (; this.at < this.text.length; this.at += 1) {
      const char = this.text[this.at]!;
      if (quote) {
        if (char === quote) quote = undefined;
      } else if (char === '"' || char === "'") quote = char;
      else if (char === '(') depth += 1;
      else if (char === ')' && --depth === 0) break;
    }
    this.at += 1;
    return this.text.slice(start + 1, this.at - 1);
  }

  /** A type's name, upper-cased. */
  private word(): string {
    return this.bareWord().toUpperCase();
  }

  /** A word as written (a field's unquoted name keeps its case); a character that starts none is skipped. */
  private bareWord(): string {
    this.skipSpaces();
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.at));
    this.at += match?.[0].length ?? 1;
    return match?.[0] ?? '';
  }

  private peek(): string | undefined {
    this.skipSpaces();
    return this.text[this.at];
  }

  private expect(char: string): void {
    if (this.peek() === char) this.at += 1;
    else this.broken = true;
  }

  private skipSpaces(): void {
    while (this.text[this.at] === ' ') this.at += 1;
  }
}

/** NUMERIC holds 29 digits before the point and 9 after; a wider DECIMAL is BIGNUMERIC. */
function decimalType(parameters: string): string {
  const [precision = 18, scale = 3] = parameters.split(',').map((part) => Number(part.trim()));
  return scale <= 9 && precision - scale <= 29 ? 'NUMERIC' : 'BIGNUMERIC';
}
