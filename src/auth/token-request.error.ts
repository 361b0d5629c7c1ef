/** A token command that cannot be carried out, for a reason the operator can fix. */
export class TokenRequestError extends Error {
  override name = 'TokenRequestError';
}
