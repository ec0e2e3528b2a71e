/**
 * The queries page: a project's saved queries (name, description), an editor that saves them, a
 * dry run (bytes and cost, no job), a run followed while it is PENDING or RUNNING (read again every
 * second) with Cancel, the result paged with its columns' types and masked columns marked, exports
 * in every format with their download links, and the tenant's quota used today and this month.
 * The address keeps the project, query and job (?project=&query=&job=), so a page can be shared.
 */
import { $, api, ApiError, badge, bytes, el, fields, type Me, readLater, row, say, startPage, when } from '../session.js';

interface Named {
  id: string;
  name: string;
}

interface Query {
  id: string;
  project_id: string;
  query_text: string;
  name: string | null;
  description: string | null;
  created_at: string;
}

interface QueryExport {
  id: string;
  status: 'PENDING' | 'RUNNING' | 'DONE' | 'FAILED';
  format: string;
  compression: string;
  error_message: string | null;
  created_at: string;
}

interface QueryJob {
  id: string;
  query_id: string;
  status: 'PENDING' | 'RUNNING' | 'DONE' | 'FAILED' | 'CANCELLED';
  error_result: { reason?: string; message?: string } | null;
  created: string;
  started: string | null;
  ended: string | null;
  total_rows: number | null;
  total_bytes_processed: number | null;
  total_bytes_billed: number | null;
  private_row_count: number | null;
  suppressed_row_count: number | null;
  results_expire_at: string | null;
  exports: QueryExport[];
}

interface ResultPage {
  rows: { data: Record<string, unknown> }[];
  columns: string[];
  schema: { name: string; type: string }[];
  column_privacy: Record<string, 'public' | 'private'>;
  total_rows: number;
  page: number;
  page_size: number;
  total_pages: number;
}

interface DryRun {
  total_bytes_processed: number;
  total_bytes_billed: number;
  cost_usd: string;
  referenced_tables: { name: string }[];
  rules: { name: string; join_only_columns: string[]; allow_exports: boolean }[];
}

interface QuotaSummary {
  quota: { daily_quota_usd: string; monthly_quota_usd: string };
  usage: { daily_cost_usd: string; monthly_cost_usd: string };
  daily_percentage_used: number;
  monthly_percentage_used: number;
  is_daily_quota_exceeded: boolean;
  is_monthly_quota_exceeded: boolean;
}

const ACTIVE = new Set(['PENDING', 'RUNNING']);
const POLL_MS = 1000;

let me: Me | undefined;
let queries: Query[] = [];
/** The query in the editor; undefined for a new one. */
let current: Query | undefined;
let shownJob: QueryJob | undefined;
let resultPage = 1;
let timer: number | undefined;

function stop(): void {
  window.clearTimeout(timer);
  timer = undefined;
}

/** Keeps the project, query and job in the address (without a new history entry). */
function remember(): void {
  const params = new URLSearchParams();
  const project = $<HTMLSelectElement>('project').value;
  if (project) params.set('project', project);
  if (current) params.set('query', current.id);
  if (shownJob) params.set('job', shownJob.id);
  history.replaceState(null, '', `${location.pathname}${params.size ? `?${params}` : ''}`);
}

async function loadProjects(): Promise<void> {
  const { projects } = await api<{ projects: Named[] }>('/api/v1/projects?limit=1000');
  const select = $<HTMLSelectElement>('project');
  select.replaceChildren(...projects.map((project) => new Option(project.name, project.id)));
  select.disabled = projects.length === 0;
  const wanted = new URLSearchParams(location.search).get('project');
  if (wanted && projects.some((project) => project.id === wanted)) select.value = wanted;
  await loadQueries();
}

async function loadQueries(): Promise<void> {
  const project = $<HTMLSelectElement>('project').value;
  queries = project ? (await api<{ queries: Query[] }>(`/api/v1/queries?project_id=${project}&limit=1000`)).queries : [];
  $<HTMLTableElement>('queries').tBodies[0]!.replaceChildren(
    ...queries.map((query) => {
      const open = el('button', { text: 'Open', className: 'quiet', attrs: { type: 'button' } });
      open.setAttribute('aria-label', `Open ${query.name ?? 'the unnamed query'}`);
      open.addEventListener('click', () => void openQuery(query).catch(fail));
      const name = query.name ? query.name : el('span', { text: '(unnamed)', className: 'hint' });
      return row(name, query.description ?? '—', when(query.created_at), open);
    }),
  );
  $('queries-empty').hidden = queries.length > 0;
}

async function openQuery(query: Query | undefined, jobId?: string): Promise<void> {
  current = query;
  $('editor-title').textContent = query ? `Query: ${query.name ?? '(unnamed)'}` : 'New query';
  $<HTMLInputElement>('query-name').value = query?.name ?? '';
  $<HTMLTextAreaElement>('query-description').value = query?.description ?? '';
  $<HTMLTextAreaElement>('query-text').value = query?.query_text ?? '';
  $('editor-status').textContent = '';
  $('dry-run-result').hidden = true;
  stop();
  shownJob = undefined;
  for (const id of ['job', 'results', 'exports']) $(id).hidden = true;
  remember();
  if (jobId) await showJob(jobId);
  else if (query) {
    const { query_jobs } = await api<{ query_jobs: QueryJob[] }>(`/api/v1/queries/${query.id}/jobs?limit=1`);
    if (query_jobs[0]) await showJob(query_jobs[0].id);
  }
}

/** Saves the editor (creating the query, or changing it when it differs); answers the saved query. */
async function save(): Promise<Query> {
  const text = $<HTMLTextAreaElement>('query-text').value;
  const name = $<HTMLInputElement>('query-name').value.trim();
  const description = $<HTMLTextAreaElement>('query-description').value;
  if (!text.trim()) throw new Error('Write the SQL first.');
  const body = { query_text: text, name: name === '' ? null : name, description: description === '' ? null : description };
  const project = $<HTMLSelectElement>('project').value;
  let saved: Query;
  if (!current) saved = await api<Query>('/api/v1/queries', { method: 'POST', body: { ...body, project_id: project } });
  else if (current.query_text !== text || current.name !== body.name || (current.description ?? null) !== body.description)
    saved = await api<Query>(`/api/v1/queries/${current.id}`, { method: 'PATCH', body });
  else return current;
  current = saved;
  $('editor-title').textContent = `Query: ${saved.name ?? '(unnamed)'}`;
  remember();
  await loadQueries();
  return saved;
}

async function dryRun(): Promise<void> {
  const query = await save();
  $('editor-status').textContent = 'Checking the query…';
  const result = await api<DryRun>('/api/v1/queries/run', {
    method: 'POST',
    body: { query_id: query.id, query_text: query.query_text, dry_run: true },
  });
  $('editor-status').textContent = 'Dry run: nothing ran and nothing was charged.';
  $('dry-run-result').hidden = false;
  fields($('dry-run-fields'), [
    ['Would read', bytes(result.total_bytes_processed)],
    ['Would be billed', bytes(result.total_bytes_billed)],
    ['Estimated cost', `$${result.cost_usd}`],
    ['Tables', result.referenced_tables.map((table) => table.name).join(', ') || '—'],
    [
      "Other tenants' rules",
      result.rules.length === 0
        ? 'none'
        : result.rules
            .map(
              (rule) =>
                `${rule.name}: ${rule.join_only_columns.length ? `${rule.join_only_columns.join(', ')} masked (join only)` : 'no private column'}; exports ${rule.allow_exports ? 'allowed' : 'not allowed'}`,
            )
            .join(' · '),
    ],
  ]);
}

async function run(): Promise<void> {
  const query = await save();
  $('editor-status').textContent = 'Starting…';
  const { job_id } = await api<{ job_id: string }>('/api/v1/queries/run', {
    method: 'POST',
    body: { query_id: query.id, query_text: query.query_text },
  });
  $('editor-status').textContent = 'The query runs as a job: see below.';
  await showJob(job_id);
  await showQuota();
}

/** Shows a job; while it (or one of its exports) is under way, reads it again every second. */
async function showJob(id: string): Promise<void> {
  stop();
  const job = await api<QueryJob>(`/api/v1/query-jobs/${id}`);
  // Another job's results start at their first page.
  if (shownJob?.id !== id) resultPage = 1;
  const firstLook = shownJob?.id !== id || shownJob.status !== job.status;
  shownJob = job;
  remember();
  $('job').hidden = false;
  const error = job.error_result;
  fields($('job-fields'), [
    ['State', badge(job.status)],
    ['Job id', job.id],
    ['Created', when(job.created)],
    ['Started', when(job.started)],
    ['Ended', when(job.ended)],
    ['Rows', job.total_rows?.toLocaleString() ?? '—'],
    ['Bytes processed', bytes(job.total_bytes_processed)],
    ['Bytes billed', bytes(job.total_bytes_billed)],
    ...(error ? ([['Why', `${error.reason ?? ''}: ${error.message ?? ''}`]] as [string, string][]) : []),
    ...(job.results_expire_at ? ([['Results kept until', when(job.results_expire_at)]] as [string, string][]) : []),
  ]);
  $('cancel').hidden = !ACTIVE.has(job.status);
  const active = ACTIVE.has(job.status) || job.exports.some((each) => ACTIVE.has(each.status));
  $('job-refresh').textContent = ACTIVE.has(job.status)
    ? `Reading the job again every second while it is ${job.status}.`
    : `Last read ${new Date().toLocaleTimeString()}.`;
  if (job.status === 'DONE') {
    if (firstLook) await showResults();
    await showExports(job);
  } else {
    $('results').hidden = true;
    $('exports').hidden = true;
  }
  if (active) {
    readLater(() => showJob(id), POLL_MS, {
      report: fail,
      current: () => shownJob?.id === id,
      timer: (next) => (timer = next),
    });
  }
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

async function showResults(): Promise<void> {
  if (!shownJob) return;
  const size = $<HTMLSelectElement>('page-size').value;
  const page = await api<ResultPage>(`/api/v1/query-jobs/${shownJob.id}/results?page=${resultPage}&page_size=${size}`);
  $('results').hidden = false;
  const masked = page.schema.filter((column) => page.column_privacy[column.name] === 'private').map((column) => column.name);
  $('results-note').textContent =
    `${page.total_rows.toLocaleString()} row${page.total_rows === 1 ? '' : 's'}.` +
    (masked.length
      ? ` Masked: ${masked.join(', ')} ${masked.length === 1 ? 'comes' : 'come'} from another tenant's private column${masked.length === 1 ? '' : 's'}, shown as “masked”.`
      : '') +
    (shownJob.suppressed_row_count ? ` ${shownJob.suppressed_row_count} group(s) left out by an aggregation threshold.` : '');
  const table = $<HTMLTableElement>('result-rows');
  table.tHead!.rows[0]!.replaceChildren(
    ...page.schema.map((column) => {
      const th = el('th', { attrs: { scope: 'col' } }, column.name);
      if (page.column_privacy[column.name] === 'private') th.append(el('span', { text: 'masked', className: 'tag' }));
      th.append(el('span', { text: column.type, className: 'type' }));
      return th;
    }),
  );
  table.tBodies[0]!.replaceChildren(
    ...page.rows.map((each) =>
      row(
        ...page.schema.map((column) =>
          page.column_privacy[column.name] === 'private'
            ? el('span', { text: 'masked', className: 'private' })
            : valueText(each.data[column.name]),
        ),
      ),
    ),
  );
  $('page-of').textContent = `Page ${page.page} of ${Math.max(page.total_pages, 1)}`;
  $<HTMLButtonElement>('previous-page').disabled = page.page <= 1;
  $<HTMLButtonElement>('next-page').disabled = page.page >= page.total_pages;
}

async function showExports(job: QueryJob): Promise<void> {
  $('exports').hidden = false;
  const rows = await Promise.all(
    job.exports.map(async (each) => {
      let file: string | Node = each.status === 'FAILED' ? (each.error_message ?? 'failed') : '—';
      if (each.status === 'DONE') {
        const link = await api<{ url: string; expires_at: string }>(`/api/v1/exports/${each.id}/download-url`);
        file = el('a', {
          text: `Download ${each.format.toLowerCase()}`,
          attrs: { href: link.url, download: '', title: `The link works until ${when(link.expires_at)}` },
        });
      }
      return row(each.format, each.compression, badge(each.status), when(each.created_at), file);
    }),
  );
  $<HTMLTableElement>('export-list').tBodies[0]!.replaceChildren(...rows);
}

async function exportResult(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  if (!shownJob) return;
  const format = $<HTMLSelectElement>('export-format').value;
  const compression = $<HTMLSelectElement>('export-compression').value;
  await api(`/api/v1/query-jobs/${shownJob.id}/exports`, { method: 'POST', body: { format, compression } });
  $('export-status').textContent = `Exporting as ${format} (${compression.toLowerCase()})…`;
  await showJob(shownJob.id);
}

async function cancel(): Promise<void> {
  if (!shownJob) return;
  const job = await api<QueryJob>(`/api/v1/query-jobs/${shownJob.id}/cancel`, { method: 'POST' });
  $('editor-status').textContent = job.status === 'CANCELLED' ? 'Cancelled.' : 'Cancelling: the worker stops the query.';
  await showJob(job.id);
  await showQuota();
}

function percent(value: number): string {
  return `${value.toFixed(1)} %`;
}

async function showQuota(): Promise<void> {
  if (me?.role !== 'Org admin') {
    fields($('quota-fields'), []);
    $('quota-note').textContent = "Only Org admins see the tenant's quota; a run over it is refused with a message.";
    return;
  }
  const summary = await api<QuotaSummary>('/api/v1/quota/summary');
  fields($('quota-fields'), [
    [
      'Used today',
      `$${summary.usage.daily_cost_usd} of $${summary.quota.daily_quota_usd} (${percent(summary.daily_percentage_used)})${summary.is_daily_quota_exceeded ? ' — used up: runs are refused until tomorrow (UTC)' : ''}`,
    ],
    [
      'Used this month',
      `$${summary.usage.monthly_cost_usd} of $${summary.quota.monthly_quota_usd} (${percent(summary.monthly_percentage_used)})${summary.is_monthly_quota_exceeded ? ' — used up: runs are refused until next month (UTC)' : ''}`,
    ],
  ]);
  $('quota-note').textContent = 'Days and months are counted in UTC.';
}

function fail(error: unknown): void {
  say('editor-status', error instanceof ApiError ? `The service refused: ${error.message}` : error);
}

function act(action: () => Promise<void>): () => void {
  return () => void action().catch(fail);
}

$('project').addEventListener(
  'change',
  act(async () => {
    await loadQueries();
    await openQuery(undefined);
  }),
);
$('new-query').addEventListener(
  'click',
  act(() => openQuery(undefined)),
);
$('editor').addEventListener('submit', (event) => {
  event.preventDefault();
  act(async () => {
    await save();
    $('editor-status').textContent = 'Saved.';
  })();
});
$('dry-run').addEventListener('click', act(dryRun));
$('run').addEventListener('click', act(run));
$('cancel').addEventListener('click', act(cancel));
$('previous-page').addEventListener(
  'click',
  act(async () => {
    resultPage = Math.max(1, resultPage - 1);
    await showResults();
  }),
);
$('next-page').addEventListener(
  'click',
  act(async () => {
    resultPage += 1;
    await showResults();
  }),
);
$('page-size').addEventListener(
  'change',
  act(async () => {
    resultPage = 1;
    await showResults();
  }),
);
$<HTMLFormElement>('export-form').addEventListener(
  'submit',
  (event) => void exportResult(event).catch((error: unknown) => say('export-status', error)),
);

startPage(async (who) => {
  me = who;
  await loadProjects();
  const params = new URLSearchParams(location.search);
  const wanted = queries.find((query) => query.id === params.get('query'));
  await openQuery(wanted, wanted ? (params.get('job') ?? undefined) : undefined);
  await showQuota();
}, stop);
