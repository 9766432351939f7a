import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A line of the app's audit trail (migrations/1796000000000-CreateAuditLog.ts). */
@Entity('audit_log')
export class AuditLog {
  /** bigserial: TypeORM reads bigint as text, so no id is rounded. */
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text' })
  message!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
