/**
 * JSON objects with a key given twice. `JSON.parse` keeps the last one, so `"amount":1,"amount":999`
 * would charge 999 while a log, a proxy or the integrator's own reading of the body says 1: such a
 * body is refused (400 naming the key), never guessed at.
 *
 * One linear pass over the text, no recursion (a hostile body cannot exhaust the stack). Keys are
 * compared decoded (`"a"` and `"\u0061"` are the same key). Only called on text that is valid JSON
 * or about to be refused as invalid; on malformed text it gives up quietly (null) and the JSON
 * parser reports the error.
 */

interface ObjectFrame {
  kind: 'object';
  keys: Set<string>;
  /** The key whose value is being read (for the path of a duplicate deeper down). */
  key: string | null;
  expectKey: boolean;
}
interface ArrayFrame {
  kind: 'array';
  index: number;
}
type Frame = ObjectFrame | ArrayFrame;

const pathOf = (stack: Frame[], key: string): string =>
  [...stack.slice(0, -1).map((f) => (f.kind === 'object' ? (f.key ?? '') : String(f.index))), key].join('.');

/** The dotted path of the first key given twice in one object (`card.ccNum`), or null. */
export function findDuplicateKey(text: string): string | null {
  const stack: Frame[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      const start = i;
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x5c /* \ */) i++;
        else if (c === 0x22) break;
      }
      if (i >= n) return null;
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectKey) {
        const raw = text.slice(start, i + 1);
        let key: string;
        try {
          key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        } catch {
          return null;
        }
        if (top.keys.has(key)) return pathOf(stack, key);
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
    } else if (ch === 0x7b /* { */) {
      stack.push({ kind: 'object', keys: new Set(), key: null, expectKey: true });
    } else if (ch === 0x5b /* [ */) {
      stack.push({ kind: 'array', index: 0 });
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      stack.pop();
    } else if (ch === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.index++;
    }
  }
  return null;
}
