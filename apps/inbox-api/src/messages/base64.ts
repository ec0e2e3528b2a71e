/**
 * Base64 as attachments arrive in the API: the standard alphabet (RFC 4648), `=` padding at the
 * end (optional), and spaces or line breaks anywhere (MIME wraps lines at 76). Pure.
 */

const PLUS = 43;
const SLASH = 47;
const EQUALS = 61;
const WHITESPACE = new Set([9, 10, 13, 32]);

function inAlphabet(code: number): boolean {
  return (
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    (code >= 48 && code <= 57) || // 0-9
    code === PLUS ||
    code === SLASH
  );
}

/**
 * How many bytes `text` decodes to, or undefined when it is not base64. One pass over the text,
 * no copy of it, and no regular expression (a backtracking one overflowed the stack on a few MB).
 */
export function base64ByteLength(text: string): number | undefined {
  let symbols = 0;
  let padding = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inAlphabet(code)) {
      if (padding > 0) return undefined; // data after the padding
      symbols++;
    } else if (code === EQUALS) {
      if (++padding > 2) return undefined;
    } else if (!WHITESPACE.has(code)) {
      return undefined;
    }
  }
  const lastGroup = symbols % 4;
  // One symbol carries 6 bits, less than a byte; padding must complete the last group of four.
  if (lastGroup === 1) return undefined;
  if (padding > 0 && lastGroup + padding !== 4) return undefined;
  return Math.floor((symbols * 3) / 4);
}
