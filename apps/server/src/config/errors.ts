/** Start-up configuration error; the message always names the offending key. */
export class ConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(`invalid configuration: ${key}: ${message}`);
    this.key = key;
    this.name = 'ConfigError';
  }
}
