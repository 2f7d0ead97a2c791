// The spellings of task types that the API description uses besides the types themselves: an alias
// stands for its type wherever a client gives a type (a list filter, a project's type, a creation
// path; contract: TaskTypeName). Answers always show the type itself.
export const typeAliases: Readonly<Record<string, string>> = {
  documentranscription: 'documenttranscription',
  segmentannoation: 'segmentannotation',
};

/** The type a name given by a client stands for: an alias's type, otherwise the name itself. */
export const canonicalType = (name: string): string => typeAliases[name] ?? name;
