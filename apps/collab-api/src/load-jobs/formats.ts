/** Source formats by file name, and file names as object keys. Pure. */
import type { SourceFormat } from '../adapters/warehouse/index.js';

const EXTENSIONS: Record<string, SourceFormat> = {
  csv: 'CSV',
  json: 'JSON',
  ndjson: 'JSON',
  jsonl: 'JSON',
  avro: 'AVRO',
  parquet: 'PARQUET',
  pqt: 'PARQUET',
  orc: 'ORC',
};

/** The format a file name's extension says (`.csv`, `.json`/`.ndjson`/`.jsonl`, `.avro`, `.parquet`/`.pqt`, `.orc`). */
export function formatOfFileName(name: string): SourceFormat | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : EXTENSIONS[extension];
}

export const EXTENSION_LIST = Object.keys(EXTENSIONS)
  .map((extension) => `.${extension}`)
  .join(', ');

/** A file name as the last segment of an object key: letters, digits, `.`, `_` and `-`, no leading dot. */
export function keySafeFileName(name: string): string {
  const safe = name
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[.]+/, '')
    .slice(-120);
  return safe === '' ? 'upload' : safe;
}
