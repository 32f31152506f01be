#!/usr/bin/env node
// `node dist/src/tools/loadgen/main.js …`: the load generator on its own (what `jumpgate bench`
// runs), for scripts and the scenario runner, which start it as a child process.

import { runBench } from './command.js';

process.exitCode = await runBench(process.argv.slice(2));
