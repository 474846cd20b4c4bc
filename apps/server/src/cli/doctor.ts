export async function runDoctorCommand(_argv: string[]): Promise<void> {
  throw new Error('not yet');
}
