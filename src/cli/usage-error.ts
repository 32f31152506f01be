// A command line the CLI cannot run (unknown command, bad flag or argument): each command
// answers it with its usage text and exit status 2, unlike a failure while running.

export class UsageError extends Error {}
