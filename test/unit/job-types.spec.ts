import { join } from 'node:path';
import ts from 'typescript';

// The job-type map (`JobTypes`) by declaration merging: each fixture project under test/types is
// its own program (a module augmentation is global to the program it is in), type-checked as an
// app's code is. Errors are read from the fixture files only: the package's own sources are a
// library to them, as its .d.ts are to an app (skipLibCheck).
const TYPES_DIR = join(__dirname, '..', 'types');
const EXPECT_ERROR = /\/\/ @ts-expect-error\b.*$/;

interface FileErrors {
  /** 1-based line numbers of the errors, with their messages. */
  errors: Array<{ line: number; message: string }>;
  /** 1-based line numbers of the lines that follow an `@ts-expect-error`. */
  expected: number[];
}

/**
 * Compiles the fixture project `name`, with its `@ts-expect-error` comments in place or taken
 * out (`strip`: then each line after one must carry an error of its own, and no other line).
 */
function compile(name: string, strip: boolean): Map<string, FileErrors> {
  const configPath = join(TYPES_DIR, name, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`${configPath}: not a tsconfig`);
  const fixtures = new Set(parsed.fileNames.filter((file) => file.includes(`/types/${name}/`)));
  if (fixtures.size === 0) throw new Error(`${configPath}: no fixture files`);
  const host = ts.createCompilerHost(parsed.options);
  const expected = new Map<string, number[]>();
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => {
    const text = readFile(file);
    if (text === undefined || !fixtures.has(file)) return text;
    const lines = text.split('\n');
    expected.set(
      file,
      lines.flatMap((line, i) => (EXPECT_ERROR.test(line) ? [i + 2] : [])),
    );
    return strip ? lines.map((line) => line.replace(EXPECT_ERROR, '')).join('\n') : text;
  };
  const program = ts.createProgram([...parsed.fileNames], parsed.options, host);
  const result = new Map<string, FileErrors>();
  for (const file of fixtures) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${file}: not in the program`);
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    result.set(file, {
      errors: diagnostics.map((diagnostic) => ({
        line: source.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1,
        message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
      })),
      expected: expected.get(file) ?? [],
    });
  }
  return result;
}

describe.each(['typed', 'untyped'])('job types: the %s app', (name) => {
  it('compiles, every @ts-expect-error used', () => {
    for (const [file, { errors }] of compile(name, false)) {
      expect({ file, errors }).toEqual({ file, errors: [] });
    }
  }, 120_000);

  it('fails exactly on the lines marked @ts-expect-error', () => {
    for (const [file, { errors, expected }] of compile(name, true)) {
      const failing = [...new Set(errors.map((error) => error.line))].sort((a, b) => a - b);
      expect({ file, failing }).toEqual({ file, failing: expected });
    }
  }, 120_000);
});
