import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generateTypes } from '../../schemas/generate-types.ts';
import { loadSchemaFiles } from '../../schemas/index.ts';
import { REPO_ROOT } from '../helpers.ts';

test('schemas/types.ts is generated from the current schema files (npm run schemas:types)', async () => {
  const committed = readFileSync(path.join(REPO_ROOT, 'schemas/types.ts'), 'utf8');
  assert.equal(committed, await generateTypes());
});

test('every schema file has an $id under schemas.amil.my named after the file, and a title', () => {
  for (const [file, schema] of loadSchemaFiles()) {
    assert.equal(schema.$id, `https://schemas.amil.my/${file}`);
    assert.match(schema.title, /^[A-Z][A-Za-z]+$/);
  }
});
