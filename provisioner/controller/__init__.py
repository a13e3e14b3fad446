"""provisioner/controller"""
