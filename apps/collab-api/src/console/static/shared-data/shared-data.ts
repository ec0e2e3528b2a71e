/**
 * The shared-data page. For a consumer: the datasets other tenants share with a project, each with
 * its tables' columns (types, masked columns, aggregation rules, whether exports are allowed). For
 * an owner (Org admin): the access log of each of the tenant's datasets, newest first, paged.
 */
import { $, api, ApiError, badge, bytes, el, type Me, row, startPage, when } from '../session.js';

interface Named {
  id: string;
  name: string;
}

interface Dataset extends Named {
  tenant_id: string;
  description: string | null;
  share_policy: { allow_exports: boolean };
}

interface Table extends Named {
  schema: { name: string; type: string; mode: string; private: boolean; description?: string | null }[];
  analysis_rule: { privacy_unit: string; min_distinct: number } | null;
}

interface LogEntry {
  job_id: string;
  tenant_name: string;
  user_email: string | null;
  query_text: string;
  status: string;
  total_rows: number | null;
  suppressed_row_count: number | null;
  total_bytes_processed: number | null;
  created_at: string;
  applied_rules: { name: string; join_only_columns: string[]; analysis_rule: { min_distinct: number } | null }[];
  exports: { format: string; status: string }[];
}

interface LogPage {
  items: LogEntry[];
  total: number;
  page: number;
  page_size: number;
}

const PAGE_SIZE = 20;
let me: Me | undefined;
let logPage = 1;

let projectTenant = new Map<string, string>();

async function loadProjects(): Promise<void> {
  const { projects } = await api<{ projects: (Named & { tenant_id: string })[] }>('/api/v1/projects?limit=1000');
  projectTenant = new Map(projects.map((project) => [project.id, project.tenant_id]));
  const select = $<HTMLSelectElement>('project');
  select.replaceChildren(
    ...(projects.length === 0 ? [new Option('No projects', '')] : projects.map((p) => new Option(p.name, p.id))),
  );
  select.disabled = projects.length === 0;
  await showShared();
}

function tableView(table: Table): HTMLElement {
  const caption = el('caption', { text: `Table ${table.name}` });
  if (table.analysis_rule)
    caption.append(
      el('span', {
        className: 'hint',
        text: ` — queries must aggregate; groups with fewer than ${table.analysis_rule.min_distinct} distinct ${table.analysis_rule.privacy_unit} are left out`,
      }),
    );
  const head = el(
    'thead',
    {},
    el(
      'tr',
      {},
      el('th', { text: 'Column', attrs: { scope: 'col' } }),
      el('th', { text: 'Type', attrs: { scope: 'col' } }),
      el('th', { text: 'Mode', attrs: { scope: 'col' } }),
      el('th', { text: 'Visible to you', attrs: { scope: 'col' } }),
    ),
  );
  const body = el(
    'tbody',
    {},
    ...table.schema.map((column) =>
      row(
        column.name,
        column.type,
        column.mode,
        column.private ? el('span', {}, 'No', el('span', { text: 'masked', className: 'tag' }), ' (join key only)') : 'Yes',
      ),
    ),
  );
  return el('div', { className: 'scroll' }, el('table', { className: 'schema' }, caption, head, body));
}

async function showShared(): Promise<void> {
  const project = $<HTMLSelectElement>('project').value;
  const datasets = project
    ? (await api<{ datasets: Dataset[] }>(`/api/v1/projects/${project}/datasets?limit=1000`)).datasets.filter(
        // Neither the caller's tenant's nor, in a project it was invited to, the project's own tenant's.
        (dataset) => dataset.tenant_id !== me?.tenant_id && dataset.tenant_id !== projectTenant.get(project),
      )
    : [];
  const views = await Promise.all(
    datasets.map(async (dataset) => {
      // A dataset of the project's own tenant is listed to an invited tenant, but its tables are not shared (404).
      const tables = await api<{ tables: Table[] }>(`/api/v1/datasets/${dataset.id}/tables?limit=1000`).then(
        (list) => list.tables,
        (error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return undefined;
          throw error;
        },
      );
      return el(
        'article',
        { className: 'dataset' },
        el('h3', { text: dataset.name }),
        el('p', {
          className: 'hint',
          text: `${dataset.description ? `${dataset.description} · ` : ''}Exports of results that read it: ${dataset.share_policy.allow_exports ? 'allowed' : 'not allowed'}.`,
        }),
        ...(tables === undefined
          ? [el('p', { className: 'hint', text: "The project's owner has not shared this dataset's tables with your tenant." })]
          : tables.length === 0
            ? [el('p', { className: 'hint', text: 'No tables yet.' })]
            : tables.map(tableView)),
      );
    }),
  );
  $('shared').replaceChildren(...views);
  $('shared-empty').hidden = views.length > 0;
}

async function loadOwnDatasets(): Promise<void> {
  const { datasets } = await api<{ datasets: Dataset[] }>('/api/v1/datasets?limit=1000');
  const own = datasets.filter((dataset) => dataset.tenant_id === me?.tenant_id);
  const select = $<HTMLSelectElement>('dataset');
  select.replaceChildren(...(own.length === 0 ? [new Option('No datasets', '')] : own.map((d) => new Option(d.name, d.id))));
  select.disabled = own.length === 0;
  logPage = 1;
  await showLog();
}

async function showLog(): Promise<void> {
  const dataset = $<HTMLSelectElement>('dataset').value;
  const page = dataset
    ? await api<LogPage>(`/api/v1/datasets/${dataset}/access-log?page=${logPage}&page_size=${PAGE_SIZE}`)
    : { items: [], total: 0, page: 1, page_size: PAGE_SIZE };
  $<HTMLTableElement>('access-log').tBodies[0]!.replaceChildren(
    ...page.items.map((entry) =>
      row(
        when(entry.created_at),
        entry.tenant_name,
        entry.user_email ?? '—',
        el('code', { text: entry.query_text, className: 'query-text' }),
        badge(entry.status),
        entry.total_rows === null
          ? '—'
          : `${entry.total_rows.toLocaleString()}${entry.suppressed_row_count ? ` (${entry.suppressed_row_count} groups left out)` : ''}`,
        bytes(entry.total_bytes_processed),
        entry.applied_rules
          .map(
            (rule) =>
              `${rule.name}: ${
                [
                  rule.join_only_columns.length ? `${rule.join_only_columns.join(', ')} masked` : '',
                  rule.analysis_rule ? `at least ${rule.analysis_rule.min_distinct} per group` : '',
                ]
                  .filter(Boolean)
                  .join('; ') || 'no rule'
              }`,
          )
          .join(' · ') || '—',
        entry.exports.map((each) => `${each.format} ${each.status}`).join(', ') || '—',
      ),
    ),
  );
  $('log-empty').hidden = page.items.length > 0;
  const pages = Math.max(1, Math.ceil(page.total / page.page_size));
  $('log-page').textContent = `Page ${page.page} of ${pages} (${page.total} job${page.total === 1 ? '' : 's'})`;
  $<HTMLButtonElement>('log-previous').disabled = page.page <= 1;
  $<HTMLButtonElement>('log-next').disabled = page.page >= pages;
}

function fail(error: unknown): void {
  $('page-error').textContent = error instanceof Error ? error.message : String(error);
}

$('project').addEventListener('change', () => void showShared().catch(fail));
$('dataset').addEventListener('change', () => {
  logPage = 1;
  void showLog().catch(fail);
});
$('log-previous').addEventListener('click', () => {
  logPage = Math.max(1, logPage - 1);
  void showLog().catch(fail);
});
$('log-next').addEventListener('click', () => {
  logPage += 1;
  void showLog().catch(fail);
});

startPage(async (who) => {
  me = who;
  const admin = who.role === 'Org admin';
  $('owner').hidden = !admin;
  $('owner-note').hidden = admin;
  await Promise.all([loadProjects(), admin ? loadOwnDatasets() : Promise.resolve()]);
});
