export function firstScreenSize(dist: string): {
  files: Array<{ file: string; bytes: number }>;
  total: number;
};
