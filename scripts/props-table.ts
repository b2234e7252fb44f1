/**
 * The props table of docs/operations.md ("Use it from your own CDK app"),
 * generated from the construct's types: `PaymentsServiceProps` and the
 * `EnvironmentSettings` (with `AlarmSettings` and `WebAclSettings`) it holds,
 * and the settings objects of its other props (infra/service-props.ts),
 * each property with its type, whether it is required, and its doc comment.
 * `npm run --silent docs:props` rewrites the table between its markers;
 * test/infra/service-construct.test.ts fails when the committed one differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['infra/stack.ts', 'infra/environments.ts', 'infra/service-props.ts'].map((file) => `${ROOT}${file}`);
/** The interfaces in the table, each property under its path from the construct's props. */
const INTERFACES: ReadonlyArray<readonly [name: string, prefix: string]> = [
  ['PaymentsServiceProps', ''],
  ['EnvironmentSettings', 'environment.'],
  ['AlarmSettings', 'environment.alarms.'],
  ['WebAclSettings', 'environment.webAcl.'],
  ['CustomDomainSettings', 'customDomain.'],
  ['ServiceKeys', 'keys.'],
  ['ScanningSettings', 'scanning.'],
  ['DocumentStorageSettings', 'documentStorage.'],
];
export const PROPS_TABLE_START = '<!-- props-table:start (npm run --silent docs:props) -->';
export const PROPS_TABLE_END = '<!-- props-table:end -->';

export function propsTable(): string {
  const program = ts.createProgram(SOURCES, { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, noEmit: true });
  const checker = program.getTypeChecker();
  const declarations = new Map<string, ts.InterfaceDeclaration>();
  for (const file of SOURCES) {
    ts.forEachChild(program.getSourceFile(file)!, (node) => {
      if (ts.isInterfaceDeclaration(node)) declarations.set(node.name.text, node);
    });
  }
  const rows = INTERFACES.flatMap(([name, prefix]) => {
    const declaration = declarations.get(name);
    if (!declaration) throw new Error(`No interface ${name} in ${SOURCES.join(', ')}`);
    return checker.getTypeAtLocation(declaration).getProperties().map((property) => {
      const type = checker.typeToString(checker.getTypeOfSymbolAtLocation(property, declaration), declaration, ts.TypeFormatFlags.NoTruncation);
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const doc = ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
      return `| \`${prefix}${property.name}\` | \`${type.replace(/\|/g, '\\|')}\` | ${optional ? 'no' : 'yes'} | ${doc.replace(/\|/g, '\\|') || '-'} |`;
    });
  });
  return ['| Prop | Type | Required | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** docs/operations.md with its props table replaced by the generated one. */
export function withPropsTable(document: string): string {
  const start = document.indexOf(PROPS_TABLE_START);
  const end = document.indexOf(PROPS_TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/operations.md has no props table markers');
  return `${document.slice(0, start + PROPS_TABLE_START.length)}\n${propsTable()}\n${document.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = `${ROOT}docs/operations.md`;
  writeFileSync(file, withPropsTable(readFileSync(file, 'utf8')));
}
