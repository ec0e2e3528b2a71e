/**
 * What every page of the console shares: the sign-in (a token kept in each tab's session storage,
 * never on disk: it lasts while the browser has a signed-in tab open), the bar with the pages and
 * who is signed in (name and role, from GET /api/v1/users/me), calls to the API with the token, and
 * small helpers that put the API's strings into the page as text, never as markup.
 *
 * A new tab asks the console's other tabs of the same browser for the token (a BroadcastChannel:
 * this origin only), so a link from an e-mail opened in a new tab lands signed in; signing out
 * signs every tab out. Without a token, a page shows its sign-in form in place, so a link
 * (/console/approvals/<id>) lands on its own page once the token is given: the address never changes.
 */

export interface Me {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  role: 'Org admin' | 'Dataset editor' | 'Dataset user';
}

const TOKEN_KEY = 'collab-console-token';

/** What the console's tabs of one browser tell each other. */
type TabMessage = { type: 'ask' } | { type: 'token'; token: string } | { type: 'sign-out' };
const tabs = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel('collab-console-session');
/** How long a new tab waits for a signed-in tab's answer before it shows the sign-in form. */
const ASK_TABS_MS = 250;

/** The token of a signed-in tab of this browser, if one answers in time. */
function tokenOfAnotherTab(): Promise<string | null> {
  const channel = tabs;
  if (!channel) return Promise.resolve(null);
  return new Promise((resolve) => {
    const answered = (event: MessageEvent<TabMessage>) => {
      if (event.data?.type === 'token' && typeof event.data.token === 'string') finish(event.data.token);
    };
    const finish = (value: string | null) => {
      clearTimeout(timer);
      channel.removeEventListener('message', answered);
      resolve(value);
    };
    const timer = setTimeout(() => finish(null), ASK_TABS_MS);
    channel.addEventListener('message', answered);
    channel.postMessage({ type: 'ask' } satisfies TabMessage);
  });
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** An answer of the API other than 2xx, with its status and `detail` as one line. */
export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/**
 * Whether a failed read may succeed when made again: a network failure or a service restarting
 * may pass; 401, 403 and 404 will not.
 */
function mayPass(error: unknown): boolean {
  return !(error instanceof ApiError && [401, 403, 404].includes(error.status));
}

/**
 * Makes a page's `read` of what it shows (a running job) in `ms`, giving `page.timer` the timer to
 * clear. A failed read is reported and made again while it may pass and the page still shows the
 * same thing (`page.current`).
 */
export function readLater(
  read: () => Promise<void>,
  ms: number,
  page: { report: (error: unknown) => void; current: () => boolean; timer: (timer: number) => void },
): void {
  const attempt = () =>
    void read().catch((error: unknown) => {
      page.report(error);
      if (mayPass(error) && page.current()) readLater(read, ms, page);
    });
  page.timer(window.setTimeout(attempt, ms));
}

/** The API's `detail` (a message, or the list of invalid fields) as one line. */
export function detailOf(body: unknown, status: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail))
    return detail.map((issue: { loc?: unknown[]; msg?: string }) => `${(issue.loc ?? []).join('.')}: ${issue.msg}`).join('; ');
  return `The service answered ${status}`;
}

/** Calls the API with the tab's token; a JSON `body` is sent as JSON. A 401 signs the tab out. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token()}` };
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const body: unknown = await response.json().catch(() => null);
  if (response.status === 401) signOut('The token was refused (expired, or not valid here): paste another one.');
  if (!response.ok) throw new ApiError(detailOf(body, response.status), response.status);
  return body as T;
}

/** An element with text content (never parsed as markup), a class, and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: { text?: string; className?: string; attrs?: Record<string, string> } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (options.text !== undefined) element.textContent = options.text;
  if (options.className) element.className = options.className;
  for (const [name, value] of Object.entries(options.attrs ?? {})) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

export function cell(content: string | Node): HTMLTableCellElement {
  return el('td', {}, content);
}

/** A row of a table's body from its cells' contents. */
export function row(...contents: (string | Node)[]): HTMLTableRowElement {
  return el('tr', {}, ...contents.map(cell));
}

/**
 * A state shown in words with a mark before it, so that its colour is never the only sign:
 * ✓ for a good end, ✕ for a bad one, ◷ while waiting, – for ended otherwise.
 */
export function badge(state: string): HTMLSpanElement {
  const kind = stateKind(state);
  const mark = { ok: '✓', bad: '✕', wait: '◷', off: '–' }[kind];
  return el(
    'span',
    { className: `status status-${kind}` },
    el('span', { text: mark, attrs: { 'aria-hidden': 'true' } }),
    ` ${state}`,
  );
}

function stateKind(state: string): 'ok' | 'bad' | 'wait' | 'off' {
  const lower = state.toLowerCase();
  if (['done', 'completed', 'approved'].includes(lower)) return 'ok';
  if (['failed', 'rejected'].includes(lower)) return 'bad';
  if (['pending', 'running'].includes(lower)) return 'wait';
  return 'off';
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export function bytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let amount = value;
  let unit = 0;
  while (amount >= 1024 && unit < units.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? amount : amount.toFixed(1)} ${units[unit]} (${value.toLocaleString()} bytes)`;
}

/** A description list of terms and values (a value as text, or an element). */
export function fields(list: HTMLElement, pairs: [string, string | Node][]): void {
  list.replaceChildren(...pairs.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', {}, value)]));
}

/** Shows an error (or any message) in a page's status line. */
export function say(id: string, message: unknown): void {
  $(id).textContent = message instanceof Error ? message.message : String(message);
}

let onSignOut: (() => void) | undefined;

export function signOut(message = ''): void {
  sessionStorage.removeItem(TOKEN_KEY);
  onSignOut?.();
  $('workspace').hidden = true;
  $('sign-in').hidden = false;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('sign-in-error').textContent = message;
}

/** The sign-in form, put before the page's workspace. */
function signInForm(): HTMLElement {
  // One line: Enter signs in.
  const input = el('input', {
    attrs: { id: 'token', type: 'password', required: '', autocomplete: 'off', spellcheck: 'false' },
  });
  const hint = el(
    'p',
    { className: 'hint', attrs: { id: 'token-hint' } },
    "Kept in this browser's console tabs only (never on disk), until they are closed or you sign out. For local use, mint one with ",
    el('code', { text: 'pnpm --filter collab-api --silent cli token --sub <sub>' }),
    '.',
  );
  input.setAttribute('aria-describedby', 'token-hint');
  const form = el(
    'form',
    { attrs: { id: 'token-form' } },
    el('label', { text: 'Access token', attrs: { for: 'token' } }),
    input,
    hint,
    el('button', { text: 'Sign in', attrs: { type: 'submit' } }),
    el('p', { className: 'error', attrs: { id: 'sign-in-error', role: 'alert' } }),
  );
  return el(
    'section',
    { className: 'panel', attrs: { id: 'sign-in', 'aria-labelledby': 'sign-in-title', hidden: '' } },
    el('h2', { text: 'Sign in', attrs: { id: 'sign-in-title' } }),
    form,
  );
}

/** Marks the bar's link to this page as the current one. */
function markCurrentPage(): void {
  const here = location.pathname.replace(/\/+$/, '') || '/console';
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav.pages a')) {
    const target = new URL(link.href).pathname.replace(/\/+$/, '');
    const current = target === '/console' ? here === '/console' : here === target || here.startsWith(`${target}/`);
    if (current) link.setAttribute('aria-current', 'page');
  }
}

/**
 * Starts a page: with a token, reads who is signed in and calls `show` with it; without one (or
 * once it is refused), shows the sign-in form, and `show` once a token works. `hide` runs when the
 * tab signs out (to stop a page's timers).
 */
export function startPage(show: (me: Me) => Promise<void>, hide?: () => void): void {
  onSignOut = hide;
  markCurrentPage();
  $('workspace').before(signInForm());
  $('workspace').prepend(el('p', { className: 'error', attrs: { id: 'page-error', role: 'alert' } }));
  const enter = async () => {
    let me: Me;
    try {
      me = await api<Me>('/api/v1/users/me');
    } catch (error) {
      if (token()) signOut(error instanceof Error ? error.message : String(error));
      return;
    }
    $('who').textContent = `Signed in as ${me.name} (${me.role}) · ${me.email}`;
    $('sign-in').hidden = true;
    $('sign-out').hidden = false;
    $('workspace').hidden = false;
    $('page-error').textContent = '';
    await show(me);
  };
  const failed = (error: unknown) => say('page-error', error);
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = $<HTMLInputElement>('token').value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $<HTMLInputElement>('token').value = '';
    enter().catch(failed);
  });
  $('sign-out').addEventListener('click', () => {
    signOut();
    tabs?.postMessage({ type: 'sign-out' } satisfies TabMessage);
  });
  tabs?.addEventListener('message', (event: MessageEvent<TabMessage>) => {
    const own = token();
    if (event.data?.type === 'ask' && own) tabs.postMessage({ type: 'token', token: own } satisfies TabMessage);
    if (event.data?.type === 'sign-out' && own) signOut('Signed out in another tab.');
  });
  if (token()) enter().catch(failed);
  else
    void tokenOfAnotherTab().then((shared) => {
      if (!shared) return signOut();
      sessionStorage.setItem(TOKEN_KEY, shared);
      enter().catch(failed);
    });
}
