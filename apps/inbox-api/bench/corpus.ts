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

const SYLLABLES = ['ka', 'lo', 'mi', 're', 'su', 'ta', 'ne', 'vo', 'pi', 'da', 'ru', 'se', 'ko', 'ma', 'li', 'fe', 'zo', 'be'];

/** 20,000 distinct pseudo-words, most frequent first. */
export const VOCABULARY: string[] = (() => {
  const random = seededRandom(7);
  const words = new Set<string>();
  while (words.size < 20_000) {
    const length = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
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
