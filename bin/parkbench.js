#!/usr/bin/env node
// Entry point of the `parkbench` command. The sources are TypeScript and run
// without a build step: tsx's loader is registered here, then the CLI loads.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
