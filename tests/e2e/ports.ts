// The three local servers of the suite: the root build, the sub-path build and
// both again under a strict CSP. Their base port comes from KPV_E2E_PORT
// (default 4173), so two runs on one machine can use different ports.
export const PORT = Number(process.env.KPV_E2E_PORT ?? 4173);
export const ROOT = `http://127.0.0.1:${PORT}`;
export const SUB = `http://127.0.0.1:${PORT + 1}`;
export const CSP = `http://127.0.0.1:${PORT + 2}`;
/** `text` with its regular-expression characters escaped. */
export const re = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
