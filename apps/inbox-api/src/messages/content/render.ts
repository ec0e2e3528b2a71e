import MarkdownIt, { type Token } from 'markdown-it';

/*
 * The HTML body and plain-text alternative of a message written in Markdown. markdown-it parses
 * in linear time and caps nesting (maxNesting); the plain text is one pass over its tokens.
 */

// html: false escapes raw HTML written in the Markdown. breaks: true keeps single line breaks,
// as mail writers (and agents) mean them: "Best,\nAda" is two lines, not one.
// markdown-it's validateLink already refuses javascript:, vbscript:, file: and non-image data: links.
export const markdown = new MarkdownIt({ html: false, linkify: true, breaks: true });

/** The HTML body and the plain-text alternative of a message written in Markdown. */
export function renderMarkdown(source: string): { html: string; text: string } {
  const tokens = markdown.parse(source, {});
  return {
    html: markdown.renderer.render(tokens, markdown.options, {}),
    text: plainText(tokens, { linkUrls: true, blockMarkers: true }),
  };
}

export interface PlainTextOptions {
  /** "label (url)" rather than just "label". */
  linkUrls: boolean;
  /** List bullets and numbers, "> " before quoted lines, blank lines between blocks. */
  blockMarkers: boolean;
}

export function plainText(tokens: Token[], options: PlainTextOptions): string {
  const blocks: string[] = [];
  const prefixes: string[] = []; // per nesting level: "> " for quotes, indentation for list items
  const lists: { ordered: boolean; next: number }[] = [];
  let marker: string | undefined; // the bullet or number of the list item's first line
  let tight = false; // a tight list's paragraphs are not separated by blank lines
  let startsList = false; // but a list is separated from what comes before it
  let row: string[] | undefined;

  const emit = (text: string) => {
    if (!options.blockMarkers) return blocks.push(text);
    const lines = text.split('\n').map((line, i) => {
      let prefix = prefixes.join('');
      if (i === 0 && marker !== undefined) {
        prefix = prefix.slice(0, prefix.length - marker.length) + marker;
        marker = undefined;
      }
      return (prefix + line).trimEnd();
    });
    blocks.push((blocks.length > 0 && (startsList || !tight) ? '\n' : '') + lines.join('\n'));
    startsList = false;
  };

  for (const token of tokens) {
    switch (token.type) {
      case 'paragraph_open':
        tight = token.hidden;
        break;
      case 'heading_open':
      case 'code_block':
      case 'fence':
      case 'hr':
      case 'table_open':
        tight = false;
        break;
    }
    switch (token.type) {
      case 'inline':
        if (row) row.push(inlineText(token.children ?? [], options));
        else emit(inlineText(token.children ?? [], options));
        break;
      case 'code_block':
      case 'fence':
        emit(token.content.replace(/\n$/, ''));
        break;
      case 'hr':
        emit('---');
        break;
      case 'blockquote_open':
        prefixes.push('> ');
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        if (lists.length === 0) startsList = true;
        lists.push({ ordered: token.type === 'ordered_list_open', next: Number(token.attrGet('start') ?? 1) });
        break;
      case 'list_item_open': {
        const list = lists.at(-1)!;
        marker = list.ordered ? `${list.next++}. ` : '- ';
        prefixes.push(' '.repeat(marker.length));
        break;
      }
      case 'blockquote_close':
      case 'list_item_close':
        prefixes.pop();
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        break;
      case 'tr_open':
        row = [];
        break;
      case 'tr_close':
        emit(row!.join(' | '));
        tight = true;
        row = undefined;
        break;
    }
  }
  return blocks.join('\n');
}

function inlineText(children: Token[], options: PlainTextOptions): string {
  // Parts joined once at the end: slicing a string built by `+=` would copy it again at every link.
  const parts: string[] = [];
  const links: { href: string; start: number }[] = [];
  for (const token of children) {
    switch (token.type) {
      case 'text':
      case 'code_inline':
        parts.push(token.content);
        break;
      case 'softbreak':
      case 'hardbreak':
        parts.push('\n');
        break;
      case 'image':
        parts.push(token.content); // the alt text
        break;
      case 'link_open':
        links.push({ href: String(token.attrGet('href') ?? ''), start: parts.length });
        break;
      case 'link_close': {
        const link = links.pop()!;
        const label = parts.slice(link.start).join('');
        if (options.linkUrls && !sameAsLabel(link.href, label)) parts.push(` (${link.href})`);
        break;
      }
    }
  }
  return parts.join('');
}

/** Linkified addresses and URLs already show their target. */
function sameAsLabel(href: string, label: string): boolean {
  return [label, `http://${label}`, `https://${label}`, `mailto:${label}`].includes(href);
}
