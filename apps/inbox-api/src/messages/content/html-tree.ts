import { Tokenizer } from 'htmlparser2';
import { SAFE_URL } from './escape.js';

/*
 * Mail HTML parsed into a light tree, in one pass and without recursion: htmlparser2's tokenizer
 * (a linear state machine) feeds a tree builder of our own. htmlparser2's Parser is not used: its
 * stack of open elements shifts and searches an array on every tag, which is quadratic in the depth.
 * What is never shown (head, scripts, hidden elements, tracking pixels, unsafe images) is left out
 * of the tree, and so are the signature blocks mail programs mark. What the conversion asks about
 * (where a quote begins, layout) is noted as elements open and close.
 */

export interface HtmlElement {
  /** Lower-case tag name; '' for the document. */
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: HtmlNode[];
  readonly parent: HtmlElement | undefined;
  /**
   * Where a mail program's quoted or forwarded part begins, in a form that marks no quote line
   * (Outlook's header block, a forward): this element and all that follows it are the quote.
   */
  readonly quoteStart: boolean;
  /** Holds block content or images: a table that does is laid out, not data. */
  holdsLayout: boolean;
}

/** Decoded text. */
export type HtmlNode = HtmlElement | string;

// Elements that are never content.
const NOT_CONTENT = new Set([
  'head',
  'title',
  'meta',
  'link',
  'style',
  'script',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
]);
// What may stand in <head>: anything else shows that the body has begun.
const HEAD_CONTENT = new Set(['meta', 'link', 'title', 'style', 'script', 'noscript', 'base', 'template']);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
// The only elements whose `/>` closes them in HTML.
const FOREIGN = new Set(['svg', 'math']);
const LAYOUT_CONTENT = new Set(['table', 'div', 'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'blockquote', 'img']);
// Start tags that close the element on top of the stack, as browsers do with unclosed <p>, <li>, <td>…
// A <table> does not close a <p>: mail without a doctype is shown in quirks mode.
const CLOSES_P = new Set(['p']);
const CLOSES_CELL = new Set(['th', 'td', 'thead']);
const CLOSES_ROW = new Set(['tr', 'th', 'td']);
const CLOSES_SECTION = new Set(['thead', 'tbody']);
const CLOSES_TERM = new Set(['dd', 'dt']);
const TABLE_PARTS = new Set(['table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th']);
// The elements that bound the reach of other end tags.
const SCOPES = new Set(['table', 'caption', 'td', 'th']);
const IMPLIED_CLOSE = new Map<string, ReadonlySet<string>>([
  ['tr', CLOSES_ROW],
  ['th', CLOSES_CELL],
  ['td', CLOSES_CELL],
  ['tbody', CLOSES_SECTION],
  ['tfoot', CLOSES_SECTION],
  ['li', new Set(['li'])],
  ['dd', CLOSES_TERM],
  ['dt', CLOSES_TERM],
  ['option', new Set(['option'])],
  ['a', new Set(['a'])],
  ['body', new Set(['head'])],
  ...[
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'ul',
  ].map((name): [string, ReadonlySet<string>] => [name, CLOSES_P]),
]);
// Attributes the conversion reads; the others are not kept.
const KEPT_ATTRIBUTES = new Set([
  'alt',
  'class',
  'data-signatureblock',
  'data-smartmail',
  'height',
  'hidden',
  'href',
  'id',
  'role',
  'src',
  'start',
  'style',
  'type',
  'width',
]);
// Quoted replies in <blockquote>s (Gmail's, Apple Mail's, Thunderbird's…) are written as Markdown
// quotes, for the line rules to tell them from the replies between them. These elements begin
// quotes that mark no line: all that follows them is quoted. Yahoo prefixes its class names when
// it quotes again ("ydp1a2b3yahoo_quoted"): they are matched at their end.
const QUOTE_START_CLASSES = ['yahoo_quoted', 'moz-forward-container'];
const QUOTE_START_IDS = new Set([
  'appendonsend', // Outlook on the web, before its rule and header block
  'divRplyFwdMsg', // Outlook on the web and new Outlook: the header block
  'mail-editor-reference-message-container', // Outlook for iOS and Android
  'OLK_SRC_BODY_SECTION', // Outlook for Mac
  'stopSpelling', // Hotmail's rule above the header block
  'zwchr', // Zimbra's rule above the header block
]);
const SIGNATURE_CLASSES = ['gmail_signature', 'gmail_signature_prefix', 'moz-signature', 'protonmail_signature_block'];
const SIGNATURE_IDS = new Set(['Signature', 'ms-outlook-mobile-signature', 'ymail_android_signature']);

interface MutableElement extends HtmlElement {
  /** Left out of the tree: its subtree is built, then dropped with it. */
  readonly dropped: boolean;
}

export function parseHtml(html: string): HtmlElement {
  const root = createElement('', NO_ATTRIBUTES, undefined);
  const stack: MutableElement[] = [root];
  // How many elements of each name are open: a stray end tag is ignored without a search. End tags
  // of table parts close them wherever they stand; other end tags only look inside the innermost
  // open cell or table, as in browsers (a stray </div> in a cell leaves the <div> around its table).
  const openCount = new Map<string, number>();
  const scopes = [new Map<string, number>()];
  let text: string[] = [];
  let tagName = '';
  // NO_ATTRIBUTES until a kept attribute comes: most elements have none.
  let attributes = NO_ATTRIBUTES;
  let attributeName = '';
  let attributeValue = '';

  const top = () => stack.at(-1)!;
  const flushText = () => {
    if (text.length === 0) return;
    const joined = text.join('');
    text = [];
    // Text in <head> means the body has begun (no <body> tag in much mail).
    if (top().name === 'head' && /\S/.test(joined)) pop();
    top().children.push(joined);
  };
  const count = (name: string, by: number) => {
    openCount.set(name, (openCount.get(name) ?? 0) + by);
    if (SCOPES.has(name)) {
      if (by > 0) scopes.push(new Map<string, number>());
      else scopes.pop();
    } else {
      const scope = scopes.at(-1)!;
      scope.set(name, (scope.get(name) ?? 0) + by);
    }
  };
  const pop = () => {
    const element = stack.pop()!;
    count(element.name, -1);
    closed(element);
  };
  const open = (name: string, selfClosing: boolean) => {
    flushText();
    const implied = IMPLIED_CLOSE.get(name);
    while (stack.length > 1 && implied?.has(top().name)) pop();
    if (top().name === 'head' && !HEAD_CONTENT.has(name)) pop();
    const parent = top();
    const element = createElement(name, attributes, parent);
    attributes = NO_ATTRIBUTES;
    if (!element.dropped) parent.children.push(element);
    const foreign = (openCount.get('svg') ?? 0) + (openCount.get('math') ?? 0) > 0;
    if (VOID.has(name) || (selfClosing && (foreign || FOREIGN.has(name)))) {
      closed(element);
      return;
    }
    stack.push(element);
    count(name, 1);
  };
  const close = (name: string) => {
    flushText();
    if (name === 'br') return open('br', false); // browsers read </br> as <br>
    if (!(TABLE_PARTS.has(name) ? openCount : scopes.at(-1)!).get(name)) {
      // and a stray </p> as <p></p>
      if (name === 'p') {
        open('p', false);
        close('p');
      }
      return;
    }
    while (top().name !== name) pop();
    pop();
  };

  const slice = (start: number, end: number) => html.slice(start, end);
  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      ontext: (start, end) => text.push(slice(start, end)),
      ontextentity: (codePoint) => text.push(String.fromCodePoint(codePoint)),
      onopentagname: (start, end) => (tagName = slice(start, end).toLowerCase()),
      onattribname: (start, end) => (attributeName = slice(start, end).toLowerCase()),
      onattribdata: (start, end) => (attributeValue += slice(start, end)),
      onattribentity: (codePoint) => (attributeValue += String.fromCodePoint(codePoint)),
      onattribend: () => {
        // The first of repeated attributes counts, as in browsers.
        if (KEPT_ATTRIBUTES.has(attributeName) && !(attributeName in attributes)) {
          if (attributes === NO_ATTRIBUTES) attributes = Object.create(null) as Record<string, string>;
          attributes[attributeName] = attributeValue;
        }
        attributeValue = '';
      },
      onopentagend: () => open(tagName, false),
      onselfclosingtag: () => open(tagName, true),
      onclosetag: (start, end) => close(slice(start, end).toLowerCase()),
      oncomment: () => {},
      oncdata: () => {},
      ondeclaration: () => {},
      onprocessinginstruction: () => {},
      onend: () => {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  flushText();
  while (stack.length > 1) pop();
  return root;
}

/** No prototype: an attribute named like an Object method is just an attribute. Frozen: shared by every element without one. */
const NO_ATTRIBUTES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

function createElement(name: string, attributes: Record<string, string>, parent: MutableElement | undefined): MutableElement {
  if (attributes === NO_ATTRIBUTES) {
    // What the general case below makes of no attributes, without its allocations (1 MB of `<p></p>` has 110,000 elements).
    return {
      name,
      attributes,
      children: [],
      parent,
      dropped: parent?.dropped === true || NOT_CONTENT.has(name) || (name === 'img' && isInvisible(name, attributes)),
      quoteStart: false,
      holdsLayout: false,
    };
  }
  const classes = attributes.class?.split(/\s+/) ?? [];
  return {
    name,
    attributes,
    children: [],
    parent,
    dropped:
      parent?.dropped === true || NOT_CONTENT.has(name) || isInvisible(name, attributes) || isSignature(attributes, classes),
    quoteStart:
      QUOTE_START_IDS.has(attributes.id ?? '') ||
      QUOTE_START_CLASSES.some((quoteClass) => classes.some((className) => className.endsWith(quoteClass))),
    holdsLayout: false,
  };
}

/** A signature block that Gmail, Thunderbird, Proton Mail, Outlook on the web or mobile, Yahoo or Windows Mail marks. */
function isSignature(attributes: Readonly<Record<string, string>>, classes: string[]): boolean {
  return (
    SIGNATURE_CLASSES.some((signatureClass) => classes.includes(signatureClass)) ||
    SIGNATURE_IDS.has(attributes.id ?? '') ||
    attributes['data-smartmail'] === 'gmail_signature' ||
    attributes['data-signatureblock'] === 'true'
  );
}

/** Tells the parent what it holds, once the element is complete. */
function closed(element: MutableElement): void {
  if (element.dropped || !element.parent) return;
  if (element.holdsLayout || LAYOUT_CONTENT.has(element.name)) element.parent.holdsLayout = true;
}

/**
 * Hidden elements (preheaders, tracking blocks), tracking pixels, and images that are not on the
 * web: inline (cid:) and embedded (data:) images are attachments or signature logos, and would fill
 * the Markdown with references nobody can follow.
 */
function isInvisible(name: string, attributes: Readonly<Record<string, string>>): boolean {
  if ('hidden' in attributes) return true;
  if (attributes.style === undefined && name !== 'img') return false;
  const style = (attributes.style ?? '').toLowerCase().replace(/\s+/g, '');
  if (/(^|;)(display:none|visibility:hidden)/.test(style)) return true;
  if (name !== 'img') return false;
  if (!SAFE_URL.test(attributes.src?.trim() ?? '')) return true;
  const size = (dimension: 'width' | 'height') => {
    const value = attributes[dimension] ?? new RegExp(`(?:^|;)${dimension}:([\\d.]+)(?:px)?(?:;|$)`).exec(style)?.[1];
    return value === undefined ? undefined : Number.parseFloat(value);
  };
  const [width, height] = [size('width'), size('height')];
  return (width !== undefined && width <= 1) || (height !== undefined && height <= 1);
}
