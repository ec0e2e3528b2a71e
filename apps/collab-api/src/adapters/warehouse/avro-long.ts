import avsc from 'avsc';

/** Avro's long as a BigInt (avsc's own is a JS number), so that INT64 values beyond 2^53 keep every digit. */
export const bigLong = avsc.types.LongType.__with({
  fromBuffer: (buffer: Buffer) => buffer.readBigInt64LE(),
  toBuffer: (value: bigint) => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigInt64LE(value);
    return buffer;
  },
  fromJSON: (value: number | string) => BigInt(value),
  toJSON: (value: bigint) => Number(value),
  isValid: (value: unknown) => typeof value === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});
