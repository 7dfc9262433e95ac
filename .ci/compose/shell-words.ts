/**
 * Splits a shell command line into words as sh would before expansion: quotes ('…', "…") and
 * backslashes are removed, and a command substitution `$(…)` stays inside its word as written (the
 * caller decides whether to run it). Enough for the one-line commands of the Dockerfile's and
 * compose.yaml's headers; pipes, redirections and `;` are refused.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let i = 0;
  const add = (text: string) => {
    word = (word ?? '') + text;
  };
  while (i < line.length) {
    const c = line[i] as string;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
      i += 1;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unclosed ' in ${line}`);
      add(line.slice(i + 1, end));
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\' && j + 1 < line.length) j += 1;
        text += line[j];
        j += 1;
      }
      if (j >= line.length) throw new Error(`unclosed " in ${line}`);
      add(text);
      i = j + 1;
    } else if (c === '\\' && i + 1 < line.length) {
      add(line[i + 1] as string);
      i += 2;
    } else if (c === '$' && line[i + 1] === '(') {
      let depth = 0;
      let j = i + 1;
      for (; j < line.length; j += 1) {
        if (line[j] === '(') depth += 1;
        else if (line[j] === ')' && --depth === 0) break;
      }
      if (j >= line.length) throw new Error(`unclosed $( in ${line}`);
      add(line.slice(i, j + 1));
      i = j + 1;
    } else if ('|;&<>`'.includes(c)) {
      throw new Error(`${JSON.stringify(c)} is more shell than a header command needs: ${line}`);
    } else {
      add(c);
      i += 1;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
