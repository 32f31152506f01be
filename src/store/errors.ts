// Why a store could not be opened: a `store.url` that names no store we can open, or a
// database that could not be reached or refused us. Messages name the URL without its password.

export class StoreUrlError extends Error {}

export class StoreConnectError extends Error {}
