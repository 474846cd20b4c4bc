/** Start-up configuration error; the message always names the offending key. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`invalid configuration: ${key}: ${message}`);
    this.name = 'ConfigError';
  }
}
