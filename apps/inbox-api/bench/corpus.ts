/**
 * Deterministic mail-like text for benchmarks: a seeded random generator and a vocabulary whose
 * word frequencies fall off like natural language (Zipf), so some words are common and most rare.
 */

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  // mulberry32
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// English letter frequencies (per mille), so that letter trigrams are as varied and as skewed as
// in real mail; a trigram index's selectivity depends on exactly that.
const LETTERS = 'etaoinshrdlcumwfgypbvkjxqz';
const FREQUENCIES = [127, 91, 82, 75, 70, 67, 63, 61, 60, 43, 40, 28, 28, 24, 24, 22, 20, 20, 19, 15, 10, 8, 2, 2, 1, 1];
const TOTAL = FREQUENCIES.reduce((sum, f) => sum + f, 0);

function letter(random: () => number): string {
  let pick = random() * TOTAL;
  for (const [i, frequency] of FREQUENCIES.entries()) {
    pick -= frequency;
    if (pick < 0) return LETTERS[i]!;
  }
  return 'e';
}

/** 20,000 distinct pseudo-words of 3 to 10 letters, most frequent first. */
export const VOCABULARY: string[] = (() => {
  const random = seededRandom(7);
  const words = new Set<string>();
  while (words.size < 20_000) {
    const length = 3 + Math.floor(random() * random() * 8);
    words.add(Array.from({ length }, () => letter(random)).join(''));
  }
  return [...words];
})();

/** A word drawn with Zipf-like frequencies: rank r is chosen with probability ~ 1/r. */
export function zipfWord(random: () => number): string {
  const harmonic = Math.log(VOCABULARY.length) + 0.5772;
  const rank = Math.min(VOCABULARY.length - 1, Math.floor(Math.exp(random() * harmonic)) - 1);
  return VOCABULARY[Math.max(0, rank)]!;
}

export function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => zipfWord(random)).join(' ');
}
