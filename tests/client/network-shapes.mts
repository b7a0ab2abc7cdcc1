// Judges answers, at run time, by the shapes the network's own token-standard OpenAPI
// files declare.
//
// No package ships those files (YAML or JSON schema). The network's wallet SDK package
// `@canton-network/core-token-standard` ships what its build generates from them with
// openapi-typescript: one declaration file per API under `dist/generated-clients/`
// (`components["schemas"][name]`). Every answer recorded here is written, as the JSON it
// was, into one TypeScript source that assigns it to a constant of its schema's type,
// and the TypeScript compiler checks that source against those declarations, read from
// node_modules: a missing required field, a field of another type or a value outside an
// enum is an error, and so is a field the schema does not declare (the compiler's
// excess-property check of object literals). The declarations are read as shipped, with
// one generator quirk undone: openapi-typescript writes an object the files leave open
// (`type: object` without properties, such as `choiceContextData` and `debugPayload`) as
// `Record<string, never>`; here it is `Record<string, unknown>`, as the files mean.

import { createRequire } from "node:module";
import path from "node:path";
import ts from "typescript";

/** The APIs whose declarations the package ships, by their file under `generated-clients`. */
export const apis = {
  metadata: "splice-api-token-metadata-v1/token-metadata-v1",
  transferInstruction: "splice-api-token-transfer-instruction-v1/transfer-instruction-v1",
  allocationInstruction: "splice-api-token-allocation-instruction-v1/allocation-instruction-v1",
  allocation: "splice-api-token-allocation-v1/allocation-v1",
} as const;
export type Api = keyof typeof apis;

const declarations = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@canton-network/core-token-standard")),
  "generated-clients",
);

/** An answer to judge: its name for messages, and the schema of the API it must be. */
export interface Recorded {
  what: string;
  api: Api;
  schema: string;
  answer: unknown;
}

const recorded: Recorded[] = [];

/** Records `answer`, named `what`, to be judged as `schema` of `api`; answers it. */
export function shape<T>(what: string, api: Api, schema: string, answer: T): T {
  recorded.push({ what, api, schema, answer });
  return answer;
}

/** Every answer recorded so far. */
export function recordedAnswers(): readonly Recorded[] {
  return recorded;
}

/** Every answer of `answers` the declarations refuse, with the compiler's reason. */
export function judge(answers: readonly Recorded[]): string[] {
  const source = path.join(declarations, "__answers__.ts");
  const names = Object.keys(apis) as Api[];
  let text = names.map((api, n) => `import type { components as C${n} } from "./${apis[api]}.js";\n`).join("");
  const firstLine: number[] = [];
  answers.forEach(({ api, schema, answer }, n) => {
    firstLine.push(text.split("\n").length - 1);
    const json = JSON.stringify(answer, null, 1);
    text += `export const a${n}: C${names.indexOf(api)}["schemas"][${JSON.stringify(schema)}] = ${json};\n`;
  });
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    lib: ["lib.es2022.d.ts"],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => {
    if (path.resolve(file) === source) return text;
    const content = readFile(file);
    return content !== undefined && path.resolve(file).startsWith(declarations)
      ? content.replaceAll("Record<string, never>", "Record<string, unknown>")
      : content;
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => path.resolve(file) === source || fileExists(file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError) => {
    const content = path.resolve(file).startsWith(declarations) ? host.readFile(file) : undefined;
    return content !== undefined ? ts.createSourceFile(file, content, language) : getSourceFile(file, language, onError);
  };
  const program = ts.createProgram([source], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const answer = answers[firstLine.findLastIndex((first) => first <= line)];
    return answer ? `${answer.what} (${answer.schema} of ${apis[answer.api]}): ${message}` : message;
  });
}
