#!/usr/bin/env node
// The `corridor` command. Sources are TypeScript; tsx compiles them on load so that
// `npm start` always runs what is in src/ without a separate build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
