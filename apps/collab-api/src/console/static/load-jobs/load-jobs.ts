/**
 * The load-job page: project → dataset → table, an upload
 * with its progress, the table's jobs, and a job's details, read again every 5 seconds while it
 * is Pending or Running. Served as is with its types stripped (see ../routes.ts); no framework,
 * nothing from the network but this service.
 */

import { $, api, detailOf, readLater, signOut, startPage, token } from '../session.js';

interface Named {
  id: string;
  name: string;
}

interface Problem {
  row: number | null;
  column: string | null;
  reason: string;
}

interface LoadJob {
  id: string;
  table_id: string;
  status: 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Cancelled';
  source_uri: string;
  source_format: string;
  write_disposition: string;
  autodetect: boolean;
  statistics: { rows_loaded: number | null; bytes_processed: number | null; duration_ms: number | null };
  error_details: { message: string; problems: Problem[]; problem_count: number } | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
}

const REFRESH_MS = 5000;
const ACTIVE = new Set(['Pending', 'Running']);

function fill(select: HTMLSelectElement, items: Named[], empty: string): void {
  select.replaceChildren(...(items.length === 0 ? [new Option(empty, '')] : items.map((item) => new Option(item.name, item.id))));
  select.disabled = items.length === 0;
}

async function loadProjects(): Promise<void> {
  const { projects } = await api<{ projects: Named[] }>('/api/v1/projects?limit=1000');
  fill($<HTMLSelectElement>('project'), projects, 'No projects');
  await loadDatasets();
}

async function loadDatasets(): Promise<void> {
  const project = $<HTMLSelectElement>('project').value;
  const datasets = project ? (await api<{ datasets: Named[] }>(`/api/v1/projects/${project}/datasets?limit=1000`)).datasets : [];
  fill($<HTMLSelectElement>('dataset'), datasets, 'No datasets');
  await loadTables();
}

async function loadTables(): Promise<void> {
  const dataset = $<HTMLSelectElement>('dataset').value;
  const tables = dataset
    ? (
        await api<{ tables: (Named & { schema: { name: string; type: string; mode: string }[] })[] }>(
          `/api/v1/datasets/${dataset}/tables?limit=1000`,
        )
      ).tables
    : [];
  fill($<HTMLSelectElement>('table'), tables, 'No tables');
  columnsByTable = new Map(
    tables.map((table) => [table.id, table.schema.map((f) => `${f.name} ${f.type}${f.mode === 'NULLABLE' ? '' : ` ${f.mode}`}`)]),
  );
  await tableChosen();
}

let columnsByTable = new Map<string, string[]>();

async function tableChosen(): Promise<void> {
  const table = $<HTMLSelectElement>('table').value;
  $('columns').textContent = table ? `Columns: ${(columnsByTable.get(table) ?? []).join(', ')}` : '';
  $<HTMLButtonElement>('upload-button').disabled = !table;
  $('job').hidden = true;
  stopRefresh();
  await loadJobs();
}

async function loadJobs(): Promise<void> {
  const table = $<HTMLSelectElement>('table').value;
  const jobs = table ? (await api<{ load_jobs: LoadJob[] }>(`/load_job/?table_id=${table}&limit=50`)).load_jobs : [];
  const body = $<HTMLTableElement>('jobs').tBodies[0]!;
  body.replaceChildren(
    ...jobs.map((job) => {
      const row = document.createElement('tr');
      const details = document.createElement('button');
      details.type = 'button';
      details.className = 'quiet';
      details.textContent = 'Details';
      details.setAttribute('aria-label', `Details of the job created ${when(job.created_at)}`);
      details.addEventListener('click', () => void showJob(job.id));
      row.append(
        cell(when(job.created_at)),
        statusCell(job.status),
        cell(job.source_format),
        cell(job.write_disposition),
        cell(job.statistics.rows_loaded?.toLocaleString() ?? '—'),
        cell(details),
      );
      return row;
    }),
  );
  $('jobs-empty').hidden = jobs.length > 0;
}

function cell(content: string | Node): HTMLTableCellElement {
  const td = document.createElement('td');
  td.append(content);
  return td;
}

function statusCell(status: string): HTMLTableCellElement {
  const td = cell(status);
  td.className = `status status-${status}`;
  return td;
}

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

let refreshTimer: number | undefined;
let shownJob: string | undefined;

function stopRefresh(): void {
  window.clearTimeout(refreshTimer);
  refreshTimer = undefined;
}

/** Shows a job, and reads it again every 5 seconds while it is Pending or Running. */
async function showJob(id: string): Promise<void> {
  stopRefresh();
  shownJob = id;
  const job = await api<LoadJob>(`/load_job/${id}`);
  if (shownJob !== id) return;
  renderJob(job);
  if (ACTIVE.has(job.status)) {
    $('job-refresh').textContent = `Refreshing every ${REFRESH_MS / 1000} seconds while the job is ${job.status}.`;
    readLater(() => showJob(id), REFRESH_MS, {
      report,
      current: () => shownJob === id,
      timer: (next) => (refreshTimer = next),
    });
  } else {
    $('job-refresh').textContent = `Last read ${new Date().toLocaleTimeString()}.`;
    await loadJobs();
  }
}

function renderJob(job: LoadJob): void {
  $('job').hidden = false;
  const fields: [string, string | HTMLElement][] = [
    [
      'Status',
      Object.assign(document.createElement('span'), { className: `status status-${job.status}`, textContent: job.status }),
    ],
    ['Job id', job.id],
    ['File', job.source_uri],
    ['Format', job.source_format],
    ['Disposition', job.write_disposition + (job.autodetect ? ', columns detected' : '')],
    ['Rows loaded', job.statistics.rows_loaded?.toLocaleString() ?? '—'],
    ['Bytes', job.statistics.bytes_processed?.toLocaleString() ?? '—'],
    ['Duration', job.statistics.duration_ms === null ? '—' : `${(job.statistics.duration_ms / 1000).toFixed(1)} s`],
    ['Created', when(job.created_at)],
    ['Started', when(job.started_at)],
    ['Ended', when(job.ended_at)],
  ];
  $('job-fields').replaceChildren(
    ...fields.flatMap(([term, value]) => [Object.assign(document.createElement('dt'), { textContent: term }), ddOf(value)]),
  );
  const error = job.error_details;
  $('job-error').hidden = !error;
  if (error) {
    $('job-error-message').textContent = error.message;
    $('job-problems').hidden = error.problems.length === 0;
    $('job-problems-caption').textContent =
      error.problem_count > error.problems.length
        ? `The first ${error.problems.length} of ${error.problem_count} problems`
        : `${error.problem_count} problem${error.problem_count === 1 ? '' : 's'}`;
    $<HTMLTableElement>('job-problems').tBodies[0]!.replaceChildren(
      ...error.problems.map((problem) => {
        const row = document.createElement('tr');
        row.append(cell(problem.row === null ? '—' : String(problem.row)), cell(problem.column ?? '—'), cell(problem.reason));
        return row;
      }),
    );
  }
  const cancel = $<HTMLButtonElement>('cancel-job');
  cancel.hidden = !ACTIVE.has(job.status);
  cancel.onclick = () => void api<LoadJob>(`/load_job/${job.id}/cancel`, { method: 'POST' }).then(() => showJob(job.id), report);
}

function ddOf(value: string | HTMLElement): HTMLElement {
  const dd = document.createElement('dd');
  dd.append(value);
  return dd;
}

/** Sends the form with the file, showing the upload's progress; then shows the job it started. */
function upload(event: SubmitEvent): void {
  event.preventDefault();
  const file = $<HTMLInputElement>('file').files?.[0];
  const table = $<HTMLSelectElement>('table').value;
  if (!file || !table) return;
  const form = new FormData();
  form.append('table_id', table);
  form.append('write_disposition', $<HTMLSelectElement>('disposition').value);
  form.append('autodetect', String($<HTMLInputElement>('autodetect').checked));
  form.append('file', file);
  const progress = $<HTMLProgressElement>('upload-progress');
  const status = $('upload-status');
  const button = $<HTMLButtonElement>('upload-button');
  progress.hidden = false;
  progress.value = 0;
  button.disabled = true;
  status.textContent = `Uploading ${file.name}…`;
  const request = new XMLHttpRequest();
  request.open('POST', '/load_job/');
  request.setRequestHeader('Authorization', `Bearer ${token()}`);
  request.responseType = 'json';
  request.upload.addEventListener('progress', (progressEvent) => {
    if (progressEvent.lengthComputable) progress.value = (progressEvent.loaded / progressEvent.total) * 100;
  });
  request.addEventListener('loadend', () => {
    button.disabled = false;
    if (request.status === 201) {
      progress.value = 100;
      const job = request.response as LoadJob;
      status.textContent = `Uploaded: the job is ${job.status}.`;
      void loadJobs()
        .then(() => showJob(job.id))
        .catch(report);
    } else if (request.status === 401) {
      signOut('The token was refused: paste another one.');
    } else {
      progress.hidden = true;
      status.textContent =
        request.status === 0
          ? 'The upload failed: the service could not be reached.'
          : `Not loaded: ${detailOf(request.response, request.status)}`;
    }
  });
  request.send(form);
}

function report(error: unknown): void {
  $('upload-status').textContent = error instanceof Error ? error.message : String(error);
}

function start(): void {
  $('project').addEventListener('change', () => void loadDatasets().catch(report));
  $('dataset').addEventListener('change', () => void loadTables().catch(report));
  $('table').addEventListener('change', () => void tableChosen().catch(report));
  $('refresh-jobs').addEventListener('click', () => void loadJobs().catch(report));
  $<HTMLFormElement>('upload-form').addEventListener('submit', upload);
  startPage(loadProjects, stopRefresh);
}

start();
