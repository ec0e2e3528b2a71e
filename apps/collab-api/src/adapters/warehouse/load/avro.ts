/**
 * Avro object container files, decoded with avsc (DuckDB's Avro extension cannot be installed
 * offline). Each record is written as a line of JSON in the table's text conventions (bytes in
 * base64, timestamps in ISO 8601) and then read like a JSON file. Columns come from the file's
 * schema: a field whose type is a union with null is NULLABLE, any other REQUIRED.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
// avsc is CommonJS: its functions hang off the default export under Node's ESM.
import avsc from 'avsc';
import { bigLong } from '../avro-long.js';
import type { Field, FieldType } from '../schema.js';
import { readLines, stageObjects } from './json.js';
import { LoadFailure } from './problems.js';
import { columnNames, decimalColumnType } from './rules.js';
import { matchColumns, type Reader } from './staging.js';

type AvroSchema =
  | string
  | AvroSchema[]
  | { type: AvroSchema; logicalType?: string; items?: AvroSchema; scale?: number; precision?: number; name?: string };

interface AvroField {
  name: string;
  type: AvroSchema;
}

/** How one Avro field becomes a column, and its values the column's text. */
interface Column {
  field: Field;
  key: string;
  toJson: (value: unknown) => unknown;
}

export const readAvro: Reader = async (sql, file, options) => {
  // Read into the load's transaction at once, so the lines need not outlive this function.
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'collab-avro-'));
  try {
    return await readAvroAsLines(sql, file, path.join(scratch, 'records.ndjson'), options);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};

async function readAvroAsLines(sql: Parameters<Reader>[0], file: string, ndjson: string, options: Parameters<Reader>[2]) {
  let columns: Column[] | undefined;
  try {
    // Longs as BigInts (avsc's own are numbers, and refuse a value past 2^53): every digit is loaded.
    const decoder = avsc.createFileDecoder(file, {
      parseHook: (schema: unknown) => avsc.Type.forSchema(schema as avsc.Schema, { registry: { long: bigLong } }),
    });
    const out = createWriteStream(ndjson);
    // What the blocks decoded take of the file: all of it after the header, or the file was cut short.
    let blockBytes = 0;
    decoder.on('block', (block: { valueCount: number; compressedDataLength: number }) => {
      blockBytes +=
        varintLength(block.valueCount) + varintLength(block.compressedDataLength) + block.compressedDataLength + SYNC_BYTES;
    });
    // The schema as the file wrote it: the decoder's type leaves out logical types it was not given.
    decoder.on('metadata', (_type: unknown, _codec: unknown, header: { meta: Record<string, Buffer> }) => {
      const written = JSON.parse(header.meta['avro.schema']!.toString('utf8')) as { fields?: AvroField[] };
      const fields = written.fields ?? [];
      const names = columnNames(fields.map((field) => field.name));
      columns = fields.map((field, i) => avroColumn(names[i]!, field));
    });
    for await (const record of decoder as AsyncIterable<Record<string, unknown>>) {
      const line = Object.fromEntries(columns!.map((column) => [column.key, column.toJson(record[column.key])]));
      if (!out.write(`${JSON.stringify(line, exactIntegers)}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
    // avsc ends without a word where the file stops inside a block: the blocks before it would load alone.
    const { size } = await stat(file);
    if ((await headerLength(file, size)) + blockBytes !== size) {
      throw new LoadFailure(
        'The file could not be read as Avro: it ends inside a block (cut short or damaged); nothing was loaded',
      );
    }
  } catch (error) {
    if (error instanceof LoadFailure) throw error;
    throw new LoadFailure(`The file could not be read as Avro: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!columns?.length) throw new LoadFailure('The file could not be read as Avro: its schema is not a record of fields');
  const found = columns;
  let fields = found.map((column) => column.field);
  let keys = found.map((column) => column.key);
  if (options.fields) {
    const matched = matchColumns(keys, options.fields);
    fields = options.fields;
    keys = fields.map((field) => matched.get(field.name) ?? field.name);
  }
  await readLines(sql, ndjson, 'Avro');
  await stageObjects(
    sql,
    'lines',
    fields,
    keys.map((key) => [key]),
  );
  return { fields, declaredModes: true };
}

/** The column of an Avro field (named `name`), and how its values are written. */
export function avroColumn(name: string, field: AvroField): Column {
  const branches = Array.isArray(field.type) ? field.type.filter((branch) => branch !== 'null') : [field.type];
  const nullable = Array.isArray(field.type) && branches.length < field.type.length;
  if (branches.length !== 1) return { field: column(name, 'JSON', 'NULLABLE'), key: field.name, toJson: (value) => value };
  const schema = branches[0]!;
  const items = typeof schema === 'object' && !Array.isArray(schema) && schema.type === 'array' ? schema.items : undefined;
  if (items !== undefined) {
    const element = scalar(items);
    if (element) {
      return {
        field: column(name, element.type, 'REPEATED'),
        key: field.name,
        toJson: (value) => (Array.isArray(value) ? value.map(element.toJson) : value),
      };
    }
  }
  const found = scalar(schema) ?? { type: 'JSON' as const, toJson: (value: unknown) => value };
  return { field: column(name, found.type, nullable ? 'NULLABLE' : 'REQUIRED'), key: field.name, toJson: found.toJson };
}

function column(name: string, type: FieldType, mode: Field['mode']): Field {
  return { name, type, mode, private: false };
}

const identity = (value: unknown) => value;
const base64 = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('base64') : value);

/** A scalar Avro type's column type and value conversion; undefined for records, maps, arrays and unions. */
function scalar(schema: AvroSchema): { type: FieldType; toJson: (value: unknown) => unknown } | undefined {
  if (Array.isArray(schema)) return undefined;
  const type = typeof schema === 'string' ? schema : schema.type;
  const logical = typeof schema === 'object' ? schema.logicalType : undefined;
  if (typeof type !== 'string') return undefined;
  switch (logical) {
    case 'timestamp-millis':
      return { type: 'TIMESTAMP', toJson: (value) => isoTimestamp(value, 1) };
    case 'timestamp-micros':
      return { type: 'TIMESTAMP', toJson: (value) => isoTimestamp(value, 1000) };
    case 'local-timestamp-millis':
      return { type: 'DATETIME', toJson: (value) => isoTimestamp(value, 1)?.replace('Z', '') };
    case 'local-timestamp-micros':
      return { type: 'DATETIME', toJson: (value) => isoTimestamp(value, 1000)?.replace('Z', '') };
    case 'date':
      return {
        type: 'DATE',
        toJson: (value) => isoTimestamp(typeof value === 'number' ? value * 86_400_000 : value, 1)?.slice(0, 10),
      };
    case 'time-millis':
      return { type: 'TIME', toJson: (value) => isoTimestamp(value, 1)?.slice(11, 23) };
    case 'time-micros':
      return { type: 'TIME', toJson: (value) => isoTimestamp(value, 1000)?.slice(11, 23) };
    case 'decimal': {
      const { scale = 0, precision = 38 } = typeof schema === 'object' && !Array.isArray(schema) ? schema : {};
      return {
        type: decimalColumnType(precision, scale),
        toJson: (value) => (Buffer.isBuffer(value) ? decimalText(value, scale) : value),
      };
    }
  }
  switch (type) {
    case 'boolean':
      return { type: 'BOOL', toJson: identity };
    case 'int':
    case 'long':
      return { type: 'INT64', toJson: identity };
    case 'float':
    case 'double':
      return { type: 'FLOAT64', toJson: identity };
    case 'string':
    case 'enum':
      return { type: 'STRING', toJson: identity };
    case 'bytes':
    case 'fixed':
      return { type: 'BYTES', toJson: base64 };
    default:
      return undefined;
  }
}

function isoTimestamp(value: unknown, perMillisecond: number): string | undefined {
  const time = typeof value === 'bigint' ? Number(value) : value;
  return typeof time === 'number' ? new Date(time / perMillisecond).toISOString() : undefined;
}

/** JSON.stringify's replacer: a BigInt as a JSON number of all its digits (Node's JSON.rawJSON; TypeScript's lib lacks it). */
function exactIntegers(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(value.toString()) : value;
}

const SYNC_BYTES = 16;

/** The bytes of a non-negative long as Avro writes it (zigzag, then 7 bits a byte). */
function varintLength(value: number): number {
  let length = 1;
  for (let zigzag = 2 * value; zigzag >= 128; zigzag = Math.floor(zigzag / 128)) length += 1;
  return length;
}

/** The container's header (magic, metadata, sync marker), as the specification writes it. */
const HEADER = avsc.Type.forSchema({
  name: 'Header',
  type: 'record',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: SYNC_BYTES } },
  ],
});

/** How many bytes the file's header takes: read in growing pieces, as its metadata may be large. */
async function headerLength(file: string, size: number): Promise<number> {
  const handle = await open(file);
  try {
    for (let wanted = Math.min(size, 64 * 1024); ; wanted = Math.min(size, wanted * 4)) {
      const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(wanted), position: 0 });
      const { offset } = HEADER.decode(buffer.subarray(0, bytesRead), 0);
      if (offset >= 0) return offset;
      if (wanted === size) throw new LoadFailure('The file could not be read as Avro: its header is cut short');
    }
  } finally {
    await handle.close();
  }
}

/** An Avro decimal: a big-endian two's-complement integer, `scale` digits after the point. */
export function decimalText(bytes: Buffer, scale: number): string {
  let unscaled = bytes.length === 0 ? 0n : BigInt.asIntN(bytes.length * 8, BigInt(`0x${bytes.toString('hex')}`));
  const negative = unscaled < 0n;
  if (negative) unscaled = -unscaled;
  const digits = unscaled.toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}
