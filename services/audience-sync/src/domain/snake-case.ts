/**
 * The trait property of an audience or computed-trait name (docs/reference/audiences.md, test/vectors/snake_case.json):
 * a lower-case letter or digit followed by an upper-case letter starts a new word; an upper-case
 * run followed by a capitalised word ends before that word; then everything is lower-cased, each
 * run of non-alphanumerics becomes one underscore, and underscores are trimmed at both ends.
 * Returns '' when the name has no letter or digit.
 */
export function snakeCase(name: string): string {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}
