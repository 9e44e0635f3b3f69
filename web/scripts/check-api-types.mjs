// Fails when src/lib/api.gen.ts is not what docs/openapi.yaml generates
// today: regenerate it with `npm run gen:api` after an API change (the type
// check then shows what the change breaks in the page).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'api-types-'));
try {
  const fresh = join(dir, 'api.gen.ts');
  execFileSync(
    join(web, 'node_modules/.bin/openapi-typescript'),
    ['../docs/openapi.yaml', '--default-non-nullable', 'false', '--enum-values', '-o', fresh],
    { cwd: web, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const committed = readFileSync(join(web, 'src/lib/api.gen.ts'), 'utf8');
  if (readFileSync(fresh, 'utf8') !== committed) {
    console.error('web/src/lib/api.gen.ts is out of date with docs/openapi.yaml: run `npm --prefix web run gen:api`');
    process.exit(1);
  }
  console.log('web/src/lib/api.gen.ts matches docs/openapi.yaml');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
