/** Test files of the binary formats, made with the same libraries a client might use. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import avro from 'avsc';

/** An Avro object container file of `records` with `schema`. */
export async function avroFile(schema: object, records: object[]): Promise<Buffer> {
  // Given the schema itself (not a type), the encoder writes it whole, logical types included.
  const encoder = new avro.streams.BlockEncoder(schema as avro.Schema);
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve) => encoder.on('end', resolve));
  for (const record of records) encoder.write(record);
  encoder.end();
  await done;
  return Buffer.concat(chunks);
}

/** A Parquet file of what `select` answers, written by DuckDB. */
export async function parquetFile(select: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'collab-parquet-'));
  const file = path.join(dir, 'data.parquet');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (${select}) TO '${file}' (FORMAT PARQUET)`);
    return await readFile(file);
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}
