/** A table of records described by its columns: a header per column and a cell per record. */
import type { Key, ReactNode } from 'react';

export interface Column<T> {
  header: ReactNode;
  cell(row: T): ReactNode;
  /** The cell's class, e.g. row-actions. */
  className?: string;
  /** The cells' direction, e.g. ltr for phone numbers. */
  dir?: 'ltr' | 'rtl';
  /** The cells' data-testid. */
  testId?: string;
  /** Leave the column out (e.g. actions for a role that cannot change anything). */
  hidden?: boolean;
}

export function RecordTable<T>({
  rows,
  rowKey,
  columns,
  testId,
  rowTestId,
}: {
  rows: readonly T[];
  rowKey(row: T): Key;
  rowTestId?(row: T): string;
  columns: ReadonlyArray<Column<T>>;
  testId?: string;
}) {
  const shown = columns.filter((c) => !c.hidden);
  return (
    <table data-testid={testId}>
      <thead>
        <tr>
          {shown.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed per table
            <th key={i} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)} data-testid={rowTestId?.(row)}>
            {shown.map((c, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed per table
              <td key={i} className={c.className} dir={c.dir} data-testid={c.testId}>
                {c.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
