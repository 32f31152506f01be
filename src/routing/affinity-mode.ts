// How a client asked its request to be routed (docs/routing.md "Affinity and rate limits"): the
// affinity header parsed to a small integer, read by the listeners, admission and routing.

export const MODE_DEFAULT = 0;
export const MODE_KEY = 1;
export const MODE_NODE = 2;
export const MODE_INVALID = -1;
