/** The read API for reporting and reconciliation: queries and answers. */
export {};
