// node:fs as it is, plus a globSync stand-in: the conformance runner imports globSync (new
// in Node 22) but uses it only for `tier-check`, which these tests do not run.
export * from 'node:fs';
import fs from 'node:fs';
export default fs;
export function globSync() {
  throw new Error('fs.globSync is unavailable on this Node version');
}
