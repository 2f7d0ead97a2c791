CREATE TABLE "quality_policies" (
	"project_id" text NOT NULL,
	"version" integer NOT NULL,
	"policy" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "quality_policies_project_id_version_pk" PRIMARY KEY("project_id","version")
);
--> statement-breakpoint
ALTER TABLE "quality_policies" ADD CONSTRAINT "quality_policies_project_id_projects_project_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("project_id") ON DELETE no action ON UPDATE no action;