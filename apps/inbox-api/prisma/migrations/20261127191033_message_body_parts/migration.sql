-- CreateTable
CREATE TABLE "message_body_parts" (
    "message_id" UUID NOT NULL,
    "body" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "chunk" TEXT NOT NULL,

    CONSTRAINT "message_body_parts_pkey" PRIMARY KEY ("message_id","body","seq")
);


-- A part is read once, by the statement that writes its message, in the same transaction: compressing it would only cost time.
ALTER TABLE "message_body_parts" ALTER COLUMN "chunk" SET STORAGE EXTERNAL;
