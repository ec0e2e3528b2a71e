/**
 * Recording a warehouse change (the outbox's first step), and taking turns with the changes
 * under way. A change is recorded in the transaction that changes its record, under the row locks
 * of that record and its parents, and waits its turn there: while a change of the record, of a
 * parent it relies on, or of a child that relies on it is under way, the transaction is rolled
 * back and tried again a little later. Nothing is held while waiting, and no transaction is open
 * while the warehouse works.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '@repo/errors';
import type { Database, Transaction } from '../database.js';
import type { Prisma, WarehouseChange, WarehouseChangeKind } from '../generated/prisma/client.js';
import type { ChangePlan } from './plan.js';

/** Thrown inside inTurn's work when it must wait for a change under way. */
class ChangeUnderWay extends Error {}

// How long a request waits for the changes before it: a warehouse change takes milliseconds on
// DuckDB and up to some 15 s on BigQuery, whose client retries rate limits and 5xx answers.
const WAIT_MS = 30_000;
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 250;

/**
 * Runs `work` in a transaction, again after a pause for as long as it finds (through
 * requireNoChangeUnderWay or requireNameNotHeld) a change under way that it must wait for; after
 * WAIT_MS, answers 409 with `busy`, which says what is under way.
 */
export async function inTurn<T>(db: Database, busy: string, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    try {
      return await db.$transaction(work);
    } catch (error) {
      if (!(error instanceof ChangeUnderWay)) throw error;
      if (Date.now() + pause > deadline) {
        throw new ConflictError(`${busy} is still under way in the warehouse; try again shortly`);
      }
    }
    await sleep(pause);
  }
}

/**
 * Whether a change is under way of `changing`, of a record it relies on (`relyingOn`: its
 * parents), or of a record that relies on `changing` (a child of it).
 */
export async function changeUnderWay(tx: Transaction, ids: { changing?: string; relyingOn?: string[] }): Promise<boolean> {
  const changing = ids.changing === undefined ? [] : [ids.changing];
  const records = [...changing, ...(ids.relyingOn ?? [])];
  const [row] = await tx.$queryRaw<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM warehouse_changes
                    WHERE record_id = ANY(${records}::uuid[]) OR involves && ${changing}::uuid[]) AS found`;
  return row!.found;
}

/** Inside inTurn: waits (see changeUnderWay). Call it once the rows concerned are locked. */
export async function requireNoChangeUnderWay(tx: Transaction, ids: { changing?: string; relyingOn?: string[] }): Promise<void> {
  if (await changeUnderWay(tx, ids)) throw new ChangeUnderWay();
}

/**
 * Inside inTurn: waits while a change under way holds the name `key` (nameKey) that it freed, so
 * that undoing it can take the name back. Call it after writing the name: the write waits for
 * the freeing transaction to commit, so its change is then seen.
 */
export async function requireNameNotHeld(tx: Transaction, key: string): Promise<void> {
  if ((await tx.warehouseChange.count({ where: { heldName: key } })) > 0) throw new ChangeUnderWay();
}

export interface ChangeIntent {
  kind: WarehouseChangeKind;
  /** Null for a repair of an object that no record has. */
  tenantId: string | null;
  recordId: string;
  /** The parents it relies on; they wait for it. */
  involves: string[];
  /** A name it freed (nameKey), held until it ends. */
  heldName?: string;
  plan: ChangePlan;
  /** The record's fields before an update (stored as JSON). */
  previous?: object;
}

/**
 * Inside inTurn: records the change, owned by the calling process for `leaseSeconds` (by the
 * database's clock); waits while its record has another change under way.
 */
export async function addChange(tx: Transaction, intent: ChangeIntent, leaseSeconds: number): Promise<WarehouseChange> {
  const change = await tryAddChange(tx, intent, leaseSeconds);
  if (!change) throw new ChangeUnderWay();
  return change;
}

/**
 * Records the change, or nothing (undefined) when its record has another change under way.
 * Written with SQL: its plan can hold a table's 10,000 columns, which Prisma would walk object by
 * object (more than the whole statement takes).
 */
export async function tryAddChange(
  tx: Transaction,
  intent: ChangeIntent,
  leaseSeconds: number,
): Promise<WarehouseChange | undefined> {
  const id = randomUUID();
  const [row] = await tx.$queryRaw<{ leaseUntil: Date; createdAt: Date }[]>`
    INSERT INTO warehouse_changes (id, kind, record_id, tenant_id, involves, held_name, plan, previous, lease_until)
    VALUES (${id}::uuid, ${intent.kind}::warehouse_change_kind, ${intent.recordId}::uuid, ${intent.tenantId}::uuid,
            ${intent.involves}::uuid[], ${intent.heldName ?? null}, ${JSON.stringify(intent.plan)}::jsonb,
            ${intent.previous === undefined ? null : JSON.stringify(intent.previous)}::jsonb,
            now() + make_interval(secs => ${leaseSeconds}))
    ON CONFLICT (record_id) DO NOTHING
    RETURNING lease_until AS "leaseUntil", created_at AS "createdAt"`;
  if (!row) return undefined;
  return {
    id,
    kind: intent.kind,
    recordId: intent.recordId,
    tenantId: intent.tenantId,
    involves: intent.involves,
    heldName: intent.heldName ?? null,
    plan: intent.plan as unknown as Prisma.JsonValue,
    previous: (intent.previous ?? null) as Prisma.JsonValue,
    ...row,
  };
}

/** Keeps a change that is still under way (a long load) from being taken for interrupted. */
export async function extendLease(db: Database, changeId: string, leaseSeconds: number): Promise<void> {
  await db.$executeRaw`UPDATE warehouse_changes SET lease_until = now() + make_interval(secs => ${leaseSeconds}) WHERE id = ${changeId}::uuid`;
}
