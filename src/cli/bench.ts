// `jumpgate bench`: the load generator (src/tools/loadgen/command.ts). The tool owns its flags
// and output because it also runs without the CLI, as dist/src/tools/loadgen/main.js.

export { runBench as runBenchCli, type BenchIo } from '../tools/loadgen/command.js';
