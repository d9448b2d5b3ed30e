#!/usr/bin/env node
// `npx amil ...`: runs the TypeScript CLI through tsx, as `npm run amil -- ...` does.
import { register } from 'tsx/esm/api';

register();
await import('./amil.ts');
