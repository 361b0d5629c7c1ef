/** A backup or restore that cannot be done as asked; its message says why, in one line. */
export class BackupRefusedError extends Error {}
