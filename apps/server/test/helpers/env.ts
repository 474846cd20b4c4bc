/**
 * The test suite's view of its environment, read in one place: TEST_DATABASE_URL (Postgres tests),
 * TOLLGATE_TEST_STRICT=1 (set by .ci/run: a component a test needs but cannot find is a failure).
 */
export const env = {
  TEST_DATABASE_URL: process.env.TEST_DATABASE_URL || undefined,
  TOLLGATE_TEST_STRICT: process.env.TOLLGATE_TEST_STRICT,
  CHROMIUM_PATH: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
};
