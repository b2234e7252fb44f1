/** asl-validator ships no type declarations; only its default export is used (test only). */
declare module 'asl-validator' {
  export default function aslValidator(definition: unknown): { isValid: boolean; errorsText(separator?: string): string };
}
