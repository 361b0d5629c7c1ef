import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../../database/bigint.transformer.js';

@Entity({ name: 'plants' })
// Untagged plants are never listed by tag: they stay out of the index.
@Index('plants_tagged_id_idx', ['tag', 'id'], { where: 'tag IS NOT NULL' })
export class Plant {
  @PrimaryColumn({ type: 'bigint', transformer: bigintTransformer })
  id: bigint;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  /** null: the plant has no tag ("" is a tag). */
  @Column({ type: 'varchar', length: 255, nullable: true })
  tag: string | null;
}
