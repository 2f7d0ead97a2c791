#!/usr/bin/env node
// The `humantask` command. The code is TypeScript, run through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
