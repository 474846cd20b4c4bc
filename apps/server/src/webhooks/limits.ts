/** At most this many ENABLED endpoints per merchant (disabled ones do not count; enabling one checks again). */
export const MAX_ENABLED_ENDPOINTS = 5;

/** Default and maximum overlap of a secret rotation, during which the previous secret still signs. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 86_400;

/** The first KiB of a receiver's response body is kept on the attempt (debugging without logs). */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;
