/**
 * Writes schemas/types.ts from the JSON Schema files, so the TypeScript types can never drift from the
 * schemas (test/schemas/types.test.ts fails when this file is stale). Run: npm run schemas:types
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { compile } from 'json-schema-to-typescript';
import { loadSchemaFiles } from './index.ts';

const SCHEMA_DIR = path.dirname(fileURLToPath(import.meta.url));

/** The generated source of schemas/types.ts. */
export async function generateTypes(): Promise<string> {
  const files = loadSchemaFiles();
  // One umbrella schema referencing every file: each type is emitted once, with its title as its name.
  const umbrella = {
    title: 'AllSchemas',
    type: 'object' as const,
    additionalProperties: false,
    properties: Object.fromEntries([...files.keys()].map((name) => [name, { $ref: name }])),
  };
  const source = await compile(umbrella, 'AllSchemas', {
    cwd: SCHEMA_DIR,
    bannerComment: '/* Generated from schemas/*.json by schemas/generate-types.ts. Do not edit. */',
    additionalProperties: false,
    unreachableDefinitions: false,
    format: true,
    style: { singleQuote: true, printWidth: 110 },
  });
  return source.replace(/export interface AllSchemas \{[^}]*\}\n/s, '');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(path.join(SCHEMA_DIR, 'types.ts'), await generateTypes());
}
