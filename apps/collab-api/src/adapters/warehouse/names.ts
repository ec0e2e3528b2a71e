const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// An id as a physical name carries it: lower case, hyphens as underscores.
const ID_PART = '[0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12}';
const PREFIX = { dataset: 'ds_', table: 't_' } as const;

/**
 * Names of a dataset and table in the warehouse, derived from their ids only: user-written names
 * never reach DDL, and renaming a dataset or table never touches the warehouse. Both forms are
 * valid unquoted identifiers in DuckDB and valid BigQuery dataset and table ids.
 *
 * `3f2a…-…` → dataset `ds_3f2a…_…`, table `t_…` (lower case, hyphens as underscores).
 */
export function physicalNames(ref: { datasetId: string; tableId: string }): { dataset: string; table: string };
export function physicalNames(ref: { datasetId: string }): { dataset: string };
export function physicalNames(ref: { datasetId: string; tableId?: string }): { dataset: string; table?: string } {
  const dataset = `${PREFIX.dataset}${identifierPart(ref.datasetId)}`;
  return ref.tableId === undefined ? { dataset } : { dataset, table: `${PREFIX.table}${identifierPart(ref.tableId)}` };
}

function identifierPart(id: string): string {
  // Ids come from the app's database, never from a request, so anything else is a bug.
  if (!UUID.test(id)) throw new TypeError(`Warehouse ids must be UUIDs, got ${JSON.stringify(id)}`);
  return id.toLowerCase().replaceAll('-', '_');
}

const PHYSICAL_NAME = {
  dataset: new RegExp(`^${PREFIX.dataset}(${ID_PART})$`),
  table: new RegExp(`^${PREFIX.table}(${ID_PART})$`),
};

/**
 * The id a physical name was made from (physicalNames in reverse), or undefined for a name of
 * another form: the warehouse may hold objects that are not this app's.
 */
export function idOfPhysicalName(kind: 'dataset' | 'table', name: string): string | undefined {
  const part = PHYSICAL_NAME[kind].exec(name)?.[1];
  if (part === undefined) return undefined;
  const [a, b, c, d, e] = part.split('_');
  return `${a}-${b}-${c}-${d}-${e}`;
}

// A table as `[project:]ds_….t_…`, a dataset as `[project:]ds_…`, or a table alone.
const NAMES_IN_TEXT = new RegExp(
  `(?:[\\w.-]+:)?${PREFIX.dataset}${ID_PART}\\.${PREFIX.table}${ID_PART}|(?:[\\w.-]+:)?(${PREFIX.dataset})${ID_PART}|${PREFIX.table}${ID_PART}`,
  'gi',
);

/**
 * A warehouse's message with its physical names (and BigQuery's project in front of them) put as
 * `<dataset>` and `<table>`: API answers name records by the clients' names and ids, never by the
 * warehouse's own.
 */
export function withoutPhysicalNames(text: string): string {
  return text.replace(NAMES_IN_TEXT, (_match, datasetAlone: string | undefined) => (datasetAlone ? '<dataset>' : '<table>'));
}
